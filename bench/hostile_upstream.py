"""A vLLM-shaped upstream that answers badly on purpose, for ``bench/soak.py --hostile``.

The request's ``model`` (the proxy writes each backend's configured model into the body)
picks the misbehaviour:

* ``nonsense-usage``: a correct answer whose usage is nonsense (a negative count, a
  string, a float, 2**63, in turn); the proxy must store its estimate, marked, not these.
* ``huge-event``: a stream whose first event never ends (tens of MB of one content
  delta); the proxy must end the stream at ``max_event_bytes`` in the API's failure shape.

    python bench/hostile_upstream.py --port 8890
"""

from __future__ import annotations

import argparse
import itertools
from typing import Any

import orjson
from aiohttp import web

NONSENSE = itertools.cycle([-7, "12", 1.5, 2**63])
HUGE_BYTES = 48 * 1024 * 1024


async def _empty(_request: web.Request) -> web.Response:
    return web.Response(text="")


async def _answer(request: web.Request) -> web.StreamResponse:
    body: dict[str, Any] = await request.json()
    if body.get("model") == "huge-event" and body.get("stream"):
        return await _huge_event(request)
    usage = {"prompt_tokens": next(NONSENSE), "completion_tokens": next(NONSENSE), "total_tokens": 0}
    doc = {
        "id": "chatcmpl-hostile",
        "object": "chat.completion",
        "model": body.get("model"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": usage,
    }
    return web.Response(body=orjson.dumps(doc), content_type="application/json")


async def _huge_event(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    await response.write(
        b'data: {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "'
    )
    piece = b"x" * 65536
    try:
        for _ in range(HUGE_BYTES // len(piece)):
            await response.write(piece)
    except (ConnectionResetError, RuntimeError):
        pass  # the proxy gave up on it, as it should
    return response


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    opts = parser.parse_args()
    app = web.Application()
    app.router.add_get("/health", _empty)
    app.router.add_get("/metrics", _empty)
    app.router.add_post("/v1/chat/completions", _answer)
    web.run_app(app, host="127.0.0.1", port=opts.port, print=None)


if __name__ == "__main__":
    main()
