"""A fake LLM upstream: a real HTTP server that answers like vLLM, OpenAI or Anthropic.

Tests, the benchmarks and ``offload demo`` put it behind the proxy instead of
a GPU box or a paid cloud, so it has to be wrong in the same ways the real
servers are. One :class:`Fake` plays one upstream, chosen by ``mode``:

``vllm``
    A vLLM 0.33 box: Chat Completions, completions, embeddings, Responses and
    Anthropic Messages (with ``count_tokens``), plus ``/health``, ``/metrics``
    and ``/v1/models``. Lenient the way vLLM is: unknown fields are ignored.
    Errors carry an *integer* ``code``; a key is checked as a Bearer token
    only and refused with vLLM's bare ``{"error": "Unauthorized"}``. On
    ``/v1/messages`` its handler errors are Anthropic-shaped, but body
    validation errors (missing ``max_tokens``, a server tool, a ``document``
    block) come back OpenAI-shaped, as vLLM's do.
``cloud``
    OpenAI: Chat Completions, completions, embeddings and Responses, strict
    about fields it does not know (400 with a *string* ``code``).
``anthropic``
    Anthropic: only Messages and ``count_tokens``. It needs an
    ``anthropic-version`` header, takes the key as ``x-api-key`` or Bearer,
    and refuses unknown top-level fields, ``metadata`` keys other than
    ``user_id`` and ``thinking`` blocks whose signature it did not mint.

What is faithful: the JSON shapes and ids of each API and mode; SSE framing
(``data:`` only and ``[DONE]`` for chat; an ``event:`` line on every event
and no ``[DONE]`` for Responses and Messages); the usage chunk only when
``stream_options.include_usage`` asks; tool-call deltas carrying ``id`` and
``name`` only in the first fragment; Responses' ``sequence_number`` from 0, one
``response.id`` across lifecycle events, ``response.incomplete`` when
``max_output_tokens`` cuts the reply; Messages' cumulative ``message_delta``
usage and Anthropic's ``ping``; where cached tokens are counted (inside
``input_tokens`` for Responses, outside it for Anthropic); the in-stream error
of each API; and a dying vLLM, which drops the connection with no terminal
event.

What is not: there is no model. The reply is :attr:`Behaviour.reply_tokens`,
or one tool call when the request offers tools and its last item is not a
tool result (the tool named by :attr:`Behaviour.tool_call`, else the first
offered one with arguments made from its JSON schema, so that a real agent
can run it). Token counts are deterministic functions of the body, so tests
can recompute them: :func:`prompt_tokens` and :func:`cache_split` for the
input, ``within_limit(api, body, plan_reply(...)).output_tokens`` for the
output of Responses and Messages.

Run it as a process (``python -m router.fake.upstream --port P --mode vllm``)
so tests can kill it, or in a thread with :func:`start_in_thread`. Tests steer
it through ``POST /_fake/config`` (fields of :class:`Behaviour`) and read what
it received (path, query string, headers, body) from ``GET /_fake/state``.
"""

from __future__ import annotations

import argparse
import asyncio
import threading

from aiohttp import web

from router.fake.protocol import MODES
from router.fake.server import Fake

# ------------------------------------------------------------- running


class RunningFake:
    """A fake upstream serving in a background thread with its own event loop."""

    def __init__(self, fake: Fake, port: int = 0) -> None:
        self.fake = fake
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self.port = port
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    @property
    def url(self) -> str:
        """The OpenAI-style base URL (``…/v1``); Anthropic clients take :attr:`root`."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()

    async def _start(self) -> None:
        self._runner = web.AppRunner(self.fake.app(), handler_cancellation=True, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def stop(self) -> None:
        """Close the listening socket and every connection; a second call does nothing."""
        if not self._thread.is_alive():
            return

        async def shutdown() -> None:
            assert self._runner is not None
            await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def start_in_thread(
    mode: str, api_key: str | None = None, model: str = "fake-model", port: int = 0
) -> RunningFake:
    return RunningFake(Fake(mode, api_key, model), port)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake vLLM / OpenAI / Anthropic upstream")
    parser.add_argument("--mode", choices=MODES, default="vllm")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--api-key")
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--first-byte-delay", type=float, default=0.0)
    opts = parser.parse_args(argv)
    fake = Fake(opts.mode, opts.api_key, opts.model)
    fake.behaviour.first_byte_delay = opts.first_byte_delay
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    web.run_app(
        fake.app(), host="127.0.0.1", port=opts.port, access_log=None, print=None, handler_cancellation=True
    )


if __name__ == "__main__":
    main()


__all__ = ["RunningFake", "main", "start_in_thread"]
