"""The fake upstream in Spark mode: a vLLM box whose time and tokens behave like the real one.

:class:`SparkFake` is the shared fake (``router.fake``) in ``vllm`` mode
with the scheduler of ``router.fake.spark_engine`` behind it. It answers every API
the fake does, in the same shapes, but:

* **Time is scaled**: ``scale`` simulated seconds pass per real second, so ten
  simulated minutes of agent traffic replay in half a minute at ``scale=20``.
  A client converts what it measures back by multiplying with ``scale``.
* A streamed answer's status and headers go out at once, as vLLM's do; its
  first event waits for the request's prefill, the rest follow its decode.
  A whole answer waits for the end of decode.
* The reply has ``min(limit, max_output)`` output tokens, where ``limit`` is the
  request's own (``max_tokens``, ``max_completion_tokens``,
  ``max_output_tokens``); the fake's usual events carry it.
* Usage counts the prompt the engine saw and the prefix-cache hit, as vLLM
  0.33 reports them with ``--enable-prompt-tokens-details``: chat and
  completions ``prompt_tokens_details.cached_tokens`` (inside
  ``prompt_tokens``), Responses ``input_tokens_details.cached_tokens`` (inside
  ``input_tokens``), Messages ``cache_read_input_tokens`` (outside
  ``input_tokens``, Anthropic's convention).
* With ``max_num_queued_reqs`` set, a request arriving to a full queue gets
  vLLM's 503 before any byte.
* ``/metrics`` shows vLLM's names for its state: ``vllm:num_requests_running``,
  ``vllm:num_requests_waiting``, ``vllm:kv_cache_usage_perc``,
  ``vllm:prefix_cache_queries_total``, ``vllm:prefix_cache_hits_total``,
  ``vllm:num_preemptions_total``, the token counters and
  ``vllm:cache_config_info`` (``block_size``, ``num_gpu_blocks``).

The prompt the engine hashes is the request's conversation rendered in order
(tools and system first, then each message or input item), so a conversation
that grows by appending shares its earlier blocks, as a chat template's
output does. ``python -m router.fake.spark --port P`` runs one.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from router.fake.server import Fake, Rejected
from router.fake.spark_engine import Engine, Seq, SparkSpec, block_hashes
from router.fake.wire import sse

GENERATIVE = frozenset({"chat", "completions", "responses", "messages"})
# vLLM's words for --max-num-queued-reqs refusing a request (vllm/exceptions.py).
QUEUE_FULL = "The engine is currently busy and cannot accept new requests. Please try again later."


def render_prompt(api: str, body: dict[str, Any]) -> bytes:
    """The prompt as the engine sees it: fixed parts first, then each turn, so that a
    conversation which grows by appending keeps its rendered prefix."""
    if api == "completions":
        prompt = body.get("prompt")
        return prompt.encode() if isinstance(prompt, str) else orjson.dumps(prompt)
    if api == "chat":
        head, turns = [body.get("tools")], body.get("messages")
    elif api == "responses":
        head, turns = [body.get("instructions"), body.get("tools")], body.get("input")
    else:
        head, turns = [body.get("tools"), body.get("system")], body.get("messages")
    parts = [orjson.dumps(head)]
    if isinstance(turns, list):
        parts += [orjson.dumps(turn) for turn in turns]
    else:
        parts.append(orjson.dumps(turns))
    return b"".join(parts)


def spark_usage(api: str, prompt: int, cached: int, output: int) -> dict[str, Any]:
    """Usage as vLLM reports it with --enable-prompt-tokens-details, per API."""
    if api == "responses":
        return {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
            "output_tokens": output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + output,
        }
    if api == "messages":
        return {
            "input_tokens": prompt - cached,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": cached,
            "output_tokens": output,
        }
    return {
        "prompt_tokens": prompt,
        "total_tokens": prompt + output,
        "completion_tokens": output,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def with_usage(data: Any, usage: dict[str, Any]) -> Any:
    """``data`` (an event or a whole body) with every usage object it carries replaced."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    if isinstance(out.get("usage"), dict):
        out["usage"] = usage
    for key in ("response", "message"):  # Responses' and Messages' nested objects
        if isinstance(out.get(key), dict):
            out[key] = with_usage(out[key], usage)
    return out


def _limit(body: dict[str, Any]) -> int | None:
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


class SparkFake(Fake):
    """The fake vLLM box with the simulated Spark's scheduler; see the module docstring."""

    def __init__(
        self,
        spec: SparkSpec | None = None,
        *,
        scale: float = 1.0,
        max_output: int = 512,
        tick_s: float = 0.01,
        api_key: str | None = None,
        model: str = "fake-model",
    ) -> None:
        super().__init__("vllm", api_key, model)
        self.engine = Engine(spec or SparkSpec())
        self.scale = scale
        self.max_output = max_output
        self.tick_s = tick_s
        self.rejected = 0  # 503s for a full queue
        self._stepped = asyncio.Event()
        self._clock: asyncio.Task[None] | None = None

    def app(self) -> web.Application:
        app = super().app()
        app.on_startup.append(self._start_clock)
        app.on_cleanup.append(self._stop_clock)
        return app

    # ------------------------------------------------------------ the clock

    async def _start_clock(self, app: web.Application) -> None:
        self._stepped = asyncio.Event()
        self._clock = asyncio.create_task(self._run())

    async def _stop_clock(self, app: web.Application) -> None:
        if self._clock is not None:
            self._clock.cancel()

    async def _run(self) -> None:
        """Step the engine by the real time elapsed, times ``scale``: late wake-ups on a busy
        machine stretch a step instead of slowing the simulated box."""
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            await asyncio.sleep(self.tick_s)
            now = loop.time()
            self.engine.step((now - last) * self.scale)
            last = now
            stepped, self._stepped = self._stepped, asyncio.Event()
            stepped.set()

    async def _until(self, ready: Callable[[], bool]) -> None:
        while not ready():
            await self._stepped.wait()

    # ------------------------------------------------------------ requests

    async def _generate(self, request: web.Request, api: str) -> web.StreamResponse:
        if api not in GENERATIVE:
            return await super()._generate(request, api)
        try:
            body = await self._admit(request, api)
        except Rejected as rejected:
            return rejected.response
        if self.engine.queue_full:
            self.rejected += 1
            return self._error(request, api, 503, QUEUE_FULL)
        tokens, hashes = block_hashes(render_prompt(api, body), self.engine.spec.block_size)
        limit = _limit(body)
        seq = self.engine.submit(tokens, hashes, min(limit or self.max_output, self.max_output))
        self.active += 1
        try:
            answer = self._answer(api, body)
            if body.get("stream") and answer.frames is not None:
                response = await self._stream_paced(request, api, answer.frames, answer.tail, seq)
            else:
                await self._until(lambda: seq.done)
                whole = with_usage(answer.whole(), self._usage(api, seq))
                response = web.Response(body=orjson.dumps(whole), content_type="application/json")
            self.completed += 1
            return response
        except (asyncio.CancelledError, ConnectionResetError):
            self.cancelled += 1
            raise
        finally:
            self.engine.abort(seq)  # a no-op once it finished; frees its blocks when the client left
            self.active -= 1

    async def _stream_paced(
        self, request: web.Request, api: str, frames: list[Any], tail: tuple[Any, ...], seq: Seq
    ) -> web.StreamResponse:
        """Headers at once, the first event at the first token, the rest as decode goes."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await self._until(lambda: seq.first_token_at is not None)
        usage = self._usage(api, seq)
        sent = 0
        while sent < len(frames):
            share = 1.0 if seq.done else seq.generated / seq.max_tokens
            due = max(1, min(len(frames), int(share * len(frames))))
            for event, data in frames[sent:due]:
                await response.write(sse(event, with_usage(data, usage)))
            sent = max(sent, due)
            if sent < len(frames):
                await self._stepped.wait()
        await self._until(lambda: seq.done)
        for event, data in tail:
            await response.write(sse(event, with_usage(data, usage)))
        await response.write_eof()
        return response

    def _usage(self, api: str, seq: Seq) -> dict[str, Any]:
        return spark_usage(api, seq.prompt_tokens, seq.cached_tokens, seq.max_tokens)

    # ------------------------------------------------------------ metrics

    async def metrics(self, request: web.Request) -> web.Response:
        e, spec = self.engine, self.engine.spec
        labels = f'engine="0",model_name="{self.model}"'
        info = (
            f'block_size="{spec.block_size}",num_gpu_blocks="{spec.num_blocks}",'
            'enable_prefix_caching="True",cache_dtype="auto"'
        )
        lines = [
            ("gauge", "vllm:num_requests_running", labels, len(e.running)),
            ("gauge", "vllm:num_requests_waiting", labels, len(e.waiting)),
            ("gauge", "vllm:kv_cache_usage_perc", labels, e.kv_usage),
            ("counter", "vllm:prefix_cache_queries_total", labels, e.prefix_queries),
            ("counter", "vllm:prefix_cache_hits_total", labels, e.prefix_hits),
            ("counter", "vllm:num_preemptions_total", labels, e.preemptions),
            ("counter", "vllm:prompt_tokens_total", labels, e.prompt_tokens_total),
            ("counter", "vllm:generation_tokens_total", labels, e.generation_tokens_total),
            ("gauge", "vllm:cache_config_info", f"{labels},{info}", 1),
        ]
        text = "".join(
            f"# TYPE {name.removesuffix('_total')} {kind}\n{name}{{{lab}}} {float(value)}\n"
            for kind, name, lab, value in lines
        )
        return web.Response(text=text, content_type="text/plain")

    async def state(self, request: web.Request) -> web.Response:
        e = self.engine
        return web.json_response(
            {
                "active": self.active,
                "completed": self.completed,
                "cancelled": self.cancelled,
                "rejected": self.rejected,
                "simulated_s": e.now,
                "running": len(e.running),
                "waiting": len(e.waiting),
                "kv_usage": e.kv_usage,
                "prefix_queries": e.prefix_queries,
                "prefix_hits": e.prefix_hits,
                "preemptions": e.preemptions,
            }
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The fake vLLM upstream as a simulated Spark")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--scale", type=float, default=1.0, help="simulated seconds per real second")
    parser.add_argument("--prefill-tps", type=float, default=700.0)
    parser.add_argument("--decode-tps", type=float, default=20.0)
    parser.add_argument("--max-num-seqs", type=int, default=32)
    parser.add_argument("--kv-tokens", type=int, default=825_000)
    parser.add_argument("--max-num-queued-reqs", type=int)
    parser.add_argument("--max-output", type=int, default=512)
    opts = parser.parse_args(argv)
    spec = SparkSpec(
        prefill_tps=opts.prefill_tps,
        decode_tps=opts.decode_tps,
        max_num_seqs=opts.max_num_seqs,
        kv_tokens=opts.kv_tokens,
        max_num_queued_reqs=opts.max_num_queued_reqs,
    )
    fake = SparkFake(spec, scale=opts.scale, max_output=opts.max_output, model=opts.model)
    web.run_app(
        fake.app(), host="127.0.0.1", port=opts.port, access_log=None, print=None, handler_cancellation=True
    )


if __name__ == "__main__":
    main()
