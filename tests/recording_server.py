"""A recording stand-in for the OpenAI Responses and Anthropic Messages APIs.

The real agent CLIs (Codex, Claude Code) are pointed at it to see exactly what
they send: every request is kept with its method, path and query, headers
(secrets redacted) and body. It answers just well enough for an agent turn to
finish: the first request that offers one of the tools in ``tool_calls`` gets a
call of that tool, the request that carries the tool's result gets ``reply``
as text, and everything else (Claude Code's chores: titles, quota probes)
gets plain text too. ``HEAD /``, ``GET /``, ``GET /v1/models`` and
``POST /v1/messages/count_tokens`` are answered; any other path is recorded
and answered 404.

It also runs a *trap*: a TCP listener to use as ``HTTP(S)_PROXY`` (with
``NO_PROXY=127.0.0.1``), so that a CLI trying to reach the internet through
its proxy settings is recorded instead of connecting anywhere.

Run it by hand to capture traffic::

    python -m tests.recording_server --port 8789 --out /tmp/requests.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
import uuid
from typing import Any

import orjson
from aiohttp import web

SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "cookie", "proxy-authorization", "openai-organization"}
)
PLACEHOLDER_KEY = "sk-placeholder"

# The tool each CLI gets called with, by name; its arguments as the model would send them.
DEFAULT_TOOL_CALLS: dict[str, dict[str, Any]] = {
    # Codex (0.171): exec_command on Linux, shell/shell_command elsewhere.
    "exec_command": {"cmd": "echo TOOL-OK-$((6*7))"},
    "shell_command": {"command": "echo TOOL-OK-$((6*7))"},
    "shell": {"command": ["bash", "-lc", "echo TOOL-OK-$((6*7))"]},
    # Claude Code.
    "Bash": {"command": "echo TOOL-OK-$((6*7))", "description": "Print a marker"},
}
TOOL_OUTPUT_MARKER = "TOOL-OK-42"  # what the command above prints; it is not in the command itself
DEFAULT_REPLY = "FAKE-REPLY: the command printed the marker, all done."
USAGE = {"input": 1234, "cached": 0, "output": 56}


def redact_headers(headers: Any) -> dict[str, str]:
    out = {}
    for key, value in headers.items():
        key = key.lower()
        if key in SECRET_HEADERS:
            value = f"Bearer {PLACEHOLDER_KEY}" if value.lower().startswith("bearer ") else PLACEHOLDER_KEY
        out[key] = value
    return out


class Recorder:
    def __init__(
        self,
        tool_calls: dict[str, dict[str, Any]] | None = None,
        reply: str = DEFAULT_REPLY,
        out: str | None = None,
    ) -> None:
        self.tool_calls = DEFAULT_TOOL_CALLS if tool_calls is None else tool_calls
        self.reply = reply
        self.out = out
        self.requests: list[dict[str, Any]] = []
        self.trapped: list[str] = []  # first lines sent to the proxy trap
        # Input-token counts to report, one per answer, before falling back to USAGE["input"]
        # (a large first count makes Codex compact its history).
        self.input_tokens: list[int] = []

    # ------------------------------------------------------------ app

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body: Any = orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError:
            body = raw.decode("utf-8", "replace")
        entry = {
            "time": time.time(),
            "method": request.method,
            "path": request.path_qs,
            "headers": redact_headers(request.headers),
            "body": body,
        }
        if self.out:
            with open(self.out, "ab") as fh:
                fh.write(orjson.dumps(entry) + b"\n")
        # Kept in memory only, so tests can check which key arrived where.
        auth = request.headers.get("Authorization", "")
        entry["credential"] = (
            auth[7:] if auth.lower().startswith("bearer ") else request.headers.get("x-api-key")
        )
        self.requests.append(entry)
        path = request.path.rstrip("/")
        if request.method in ("HEAD", "GET") and path == "":
            return web.Response(status=200, text="ok" if request.method == "GET" else None)
        if request.method == "GET" and path == "/v1/models":
            return _json(
                {"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "fake"}]}
            )
        if request.method == "POST" and path == "/v1/responses" and isinstance(body, dict):
            return await self.responses(request, body)
        if request.method == "POST" and path == "/v1/messages/count_tokens" and isinstance(body, dict):
            return _json({"input_tokens": max(1, len(raw) // 4)})
        if request.method == "POST" and path == "/v1/messages" and isinstance(body, dict):
            return await self.messages(request, body)
        return _json({"error": {"message": f"no route {request.method} {request.path}"}}, 404)

    # ------------------------------------------------------- decisions

    def _input_tokens(self) -> int:
        return self.input_tokens.pop(0) if self.input_tokens else USAGE["input"]

    def _pick_tool(self, names: list[str]) -> tuple[str, dict[str, Any]] | None:
        for name in names:
            if name in self.tool_calls:
                return name, self.tool_calls[name]
        return None

    # -------------------------------------------------------- Responses

    async def responses(self, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
        items = body.get("input") or []
        answered = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)
        names = [
            t.get("name")
            for t in body.get("tools") or []
            if isinstance(t, dict) and t.get("type") == "function"
        ]
        call = None if answered else self._pick_tool(names)
        rid = f"resp_{uuid.uuid4().hex}"
        if call is not None:
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{uuid.uuid4().hex}",
                "call_id": f"call_{uuid.uuid4().hex[:24]}",
                "name": call[0],
                "arguments": json.dumps(call[1]),
                "status": "completed",
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": self.reply, "annotations": []}],
            }
        usage = {
            "input_tokens": (prompt := self._input_tokens()),
            "input_tokens_details": {"cached_tokens": USAGE["cached"]},
            "output_tokens": USAGE["output"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + USAGE["output"],
        }
        response = {
            "id": rid,
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": body.get("model"),
            "output": [item],
            "usage": usage,
        }
        if not body.get("stream"):
            return _json(response)
        events: list[dict[str, Any]] = [
            {
                "type": "response.created",
                "response": {**response, "status": "in_progress", "output": [], "usage": None},
            },
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "status": "in_progress"},
            },
        ]
        if item["type"] == "message":
            events.append(
                {
                    "type": "response.output_text.delta",
                    "output_index": 0,
                    "content_index": 0,
                    "item_id": item["id"],
                    "delta": self.reply,
                }
            )
        else:
            events.append(
                {
                    "type": "response.function_call_arguments.delta",
                    "output_index": 0,
                    "item_id": item["id"],
                    "delta": item["arguments"],
                }
            )
        events += [
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": response},
        ]
        return await _sse(request, [(e["type"], {**e, "sequence_number": n}) for n, e in enumerate(events)])

    # --------------------------------------------------------- Messages

    async def messages(self, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        content = last.get("content") if isinstance(last, dict) else None
        answered = isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        )
        names = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
        call = None if answered else self._pick_tool(names)
        mid = f"msg_{uuid.uuid4().hex[:24]}"
        if call is not None:
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": f"toolu_{uuid.uuid4().hex[:24]}",
                "name": call[0],
                "input": call[1],
            }
            stop = "tool_use"
        else:
            block = {"type": "text", "text": self.reply}
            stop = "end_turn"
        usage = {
            "input_tokens": self._input_tokens(),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": USAGE["cached"],
            "output_tokens": USAGE["output"],
        }
        message = {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            return _json(message)
        start_block = {**block, "input": {}} if block["type"] == "tool_use" else {"type": "text", "text": ""}
        delta = (
            {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            if block["type"] == "tool_use"
            else {"type": "text_delta", "text": self.reply}
        )
        events = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        **message,
                        "content": [],
                        "stop_reason": None,
                        "usage": {**usage, "output_tokens": 1},
                    },
                },
            ),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": start_block},
            ),
            ("ping", {"type": "ping"}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": USAGE["output"]},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return await _sse(request, events)


async def _sse(request: web.Request, events: list[tuple[str, dict[str, Any]]]) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    for name, data in events:
        await response.write(f"event: {name}\n".encode() + b"data: " + orjson.dumps(data) + b"\n\n")
    await response.write_eof()
    return response


def _json(payload: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(payload), status=status, content_type="application/json")


# ------------------------------------------------------------- running


class RunningRecorder:
    """The recorder and its proxy trap, serving on 127.0.0.1 in a background thread."""

    def __init__(self, recorder: Recorder, port: int = 0) -> None:
        self.recorder = recorder
        self.port = port
        self.trap_port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._runner: web.AppRunner | None = None
        self._trap: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("recording server did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def trap_url(self) -> str:
        return f"http://127.0.0.1:{self.trap_port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.recorder.requests

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()

    async def _start(self) -> None:
        self._runner = web.AppRunner(self.recorder.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._trap = await start_trap(self.recorder)
        self.trap_port = self._trap.sockets[0].getsockname()[1]

    def stop(self) -> None:
        async def shutdown() -> None:
            assert self._runner is not None and self._trap is not None
            self._trap.close()
            await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


async def start_trap(recorder: Recorder, port: int = 0) -> asyncio.Server:
    """A listener that notes the first line of every connection (e.g. ``CONNECT host:443``) and closes it."""

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await asyncio.wait_for(reader.readline(), 5)).decode("latin-1").strip()
        except (TimeoutError, ConnectionError):
            line = "<no request line>"
        recorder.trapped.append(line)
        if recorder.out:
            with open(recorder.out, "ab") as fh:
                fh.write(orjson.dumps({"time": time.time(), "trapped": line}) + b"\n")
        writer.close()

    return await asyncio.start_server(on_connect, "127.0.0.1", port)


def start_in_thread(
    tool_calls: dict[str, dict[str, Any]] | None = None, reply: str = DEFAULT_REPLY, port: int = 0
) -> RunningRecorder:
    return RunningRecorder(Recorder(tool_calls, reply), port)


def main() -> None:
    parser = argparse.ArgumentParser(description="Record what agent CLIs send (Responses / Messages)")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--trap-port", type=int, default=0, help="also run the proxy trap on this port")
    parser.add_argument("--out", required=True, help="append one JSON line per request here")
    parser.add_argument("--reply", default=DEFAULT_REPLY)
    opts = parser.parse_args()
    recorder = Recorder(reply=opts.reply, out=opts.out)

    async def serve() -> None:
        runner = web.AppRunner(recorder.app(), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", opts.port).start()
        if opts.trap_port:
            await start_trap(recorder, opts.trap_port)
        await asyncio.Event().wait()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
