"""Forwarding: adapt the body for a backend, send it, relay the answer.

The body arrives parsed once (a dict). For each backend tried, it is copied
shallowly, adapted (model, extras, stripped fields), serialised once and
sent. Before the first byte reaches the client, a failure moves the request
to the next backend in ``routing.fallbacks``; after it, a stream ends with an
error event and ``[DONE]``, never a silent truncation.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import orjson
from starlette.responses import Response

from router.accounting import UsageRow
from router.backends import Backend, Endpoint, Pool, Unavailable
from router.config import CapacityConfig
from router.errors import ProxyError, normalise_upstream_error
from router.policy import Decision
from router.sse import SSERelay
from router.streaming import RelayResponse
from router.transcript import Transcript

log = logging.getLogger("offload.proxy")

# vLLM-only request fields (reference §1): OpenAI answers 400 for each.
VLLM_ONLY_FIELDS = frozenset(
    {
        "top_k", "min_p", "repetition_penalty", "use_beam_search", "length_penalty",
        "stop_token_ids", "include_stop_str_in_output", "ignore_eos", "min_tokens",
        "skip_special_tokens", "spaces_between_special_tokens", "truncate_prompt_tokens",
        "truncation_side", "prompt_logprobs", "logprob_token_ids", "allowed_token_ids",
        "bad_words", "watermarking", "repetition_detection", "thinking_token_budget",
        "include_reasoning", "chat_template_kwargs", "chat_template", "add_generation_prompt",
        "continue_final_message", "add_special_tokens", "documents", "echo",
        "mm_processor_kwargs", "media_io_kwargs", "structured_outputs", "priority",
        "request_id", "session_id", "cache_salt", "kv_transfer_params", "vllm_xargs",
        "return_token_ids", "return_prompt_text", "stream_interval", "enable_thinking",
        "guided_json", "guided_regex", "guided_choice", "guided_grammar",
        "guided_decoding_backend", "guided_whitespace_pattern",
    }
)  # fmt: skip
_REASONING_FIELDS = ("reasoning", "reasoning_content")


class UpstreamFailure(Unavailable):
    """The request failed before any byte of an answer: try the next backend. (An
    ``Unavailable`` means no attempt was made; telling them apart gives 502 or 503.)"""


# ------------------------------------------------------------- body


def adapt_body(body: dict[str, Any], backend: Backend, path: str) -> tuple[bytes, bool]:
    """The bytes to send ``backend``, and whether the client asked for usage itself.

    Works on a shallow copy: the client's dict is never changed, so a fallback
    starts again from what the client sent.
    """
    out = dict(body)
    out["model"] = backend.config.embeddings_model if path == "/embeddings" else backend.model
    for key, value in backend.config.extra_body.items():
        mine = out.get(key)
        if isinstance(value, dict) and isinstance(mine, dict):
            out[key] = {**value, **mine}  # the client's own settings win
        elif key not in out:
            out[key] = value
    if backend.kind == "openai":
        _strip_for_cloud(out, path)
    client_wants_usage = False
    if out.get("stream") is True:
        options = out.get("stream_options")
        options = dict(options) if isinstance(options, dict) else {}
        client_wants_usage = options.get("include_usage") is True
        options["include_usage"] = True  # the proxy always needs the token counts
        out["stream_options"] = options
    return orjson.dumps(out), client_wants_usage


def _strip_for_cloud(out: dict[str, Any], path: str) -> None:
    for key in VLLM_ONLY_FIELDS.intersection(out):
        del out[key]
    messages = out.get("messages")
    if isinstance(messages, list) and any(
        isinstance(m, dict) and m.get("role") == "assistant" and any(f in m for f in _REASONING_FIELDS)
        for m in messages
    ):
        out["messages"] = [_without_reasoning(m) for m in messages]
    # gpt-5 and o-series reject max_tokens on chat; max_completion_tokens means the same.
    if path == "/chat/completions" and "max_tokens" in out and "max_completion_tokens" not in out:
        out["max_completion_tokens"] = out.pop("max_tokens")


def _without_reasoning(message: Any) -> Any:
    if isinstance(message, dict) and message.get("role") == "assistant":
        return {k: v for k, v in message.items() if k not in _REASONING_FIELDS}
    return message


def usage_into_row(usage: dict[str, Any], row: UsageRow) -> None:
    row.prompt_tokens = _int(usage.get("prompt_tokens"))
    row.completion_tokens = _int(usage.get("completion_tokens"))
    prompt_details = usage.get("prompt_tokens_details")
    if isinstance(prompt_details, dict):
        row.cached_tokens = _int(prompt_details.get("cached_tokens"))
    completion_details = usage.get("completion_tokens_details")
    if isinstance(completion_details, dict):
        row.reasoning_tokens = _int(completion_details.get("reasoning_tokens"))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


# ------------------------------------------------------------- forwarding


class Forwarder:
    def __init__(
        self,
        pool: Pool,
        capacity: CapacityConfig,
        finish: Callable[[UsageRow], None],
        on_fallback: Callable[[str, str, str], None],
    ) -> None:
        self.pool = pool
        self.capacity = capacity
        self.finish = finish  # accounting + metrics, once per request
        self.on_fallback = on_fallback

    async def forward(
        self, body: dict[str, Any], decision: Decision, row: UsageRow, path: str, t0: float
    ) -> Response:
        """Try the decided backend, then its fallbacks; answer from the first that can."""
        failures: list[Unavailable] = []
        last_error: tuple[int, bytes] | None = None
        previous: Backend | None = None
        for backend in self.pool.candidates(decision.backend):
            if previous is not None:
                self.on_fallback(previous.name, backend.name, failures[-1].reason)
            previous = backend
            try:
                endpoint = await backend.acquire(self._queue_timeout(backend))
            except Unavailable as exc:
                failures.append(exc)
                continue
            committed = False
            response: aiohttp.ClientResponse | None = None
            try:
                payload, client_usage = adapt_body(body, backend, path)
                response = await self._attempt(backend, endpoint, path, payload, row)
                if response.status >= 500 or response.status == 408:
                    # Worth another backend; keep the answer in case none is left.
                    last_error = (response.status, await self._read_error(response))
                    backend.report(endpoint, ok=False)
                    failures.append(UpstreamFailure(f"http_{response.status}", f"HTTP {response.status}"))
                    continue
                row.backend, row.route = backend.name, backend.route
                if failures:
                    row.fallback, row.fallback_reason = True, failures[-1].reason
                if row.stream and response.status == 200:
                    first = await self._first_chunk(backend, response)
                    committed = True  # the stream owns the slot from here
                    return self._stream(backend, endpoint, response, first, client_usage, row, t0)
                data = await self._read_whole(backend, response)
                backend.report(endpoint, ok=True)
                return self._whole(response, data, row, t0)
            except UpstreamFailure as exc:
                backend.report(endpoint, ok=False)
                failures.append(exc)
            finally:
                if not committed:
                    # Also on cancellation (client gone): closing the connection,
                    # not pooling it, is what makes vLLM abort the request.
                    if response is not None:
                        response.close()
                    backend.release(endpoint)
        return self._no_backend(failures, last_error, row, t0)

    @staticmethod
    async def _read_error(response: aiohttp.ClientResponse) -> bytes:
        try:
            return await response.read()
        except (aiohttp.ClientError, TimeoutError):
            return b""  # normalise_upstream_error still says which status it was

    def _queue_timeout(self, backend: Backend) -> float:
        if self.capacity.policy == "queue" and backend.config.max_concurrency:
            return self.capacity.queue_timeout_s
        return 0.0

    async def _attempt(
        self, backend: Backend, endpoint: Endpoint, path: str, payload: bytes, row: UsageRow
    ) -> aiohttp.ClientResponse:
        """POST once; retry once a pooled connection the server had already closed."""
        assert endpoint.session is not None
        headers = {"Content-Type": "application/json", "X-Request-Id": row.request_id, **backend.auth_headers}
        url = endpoint.url + path
        for attempt in (1, 2):
            try:
                return await endpoint.session.post(url, data=payload, headers=headers)
            except aiohttp.ServerDisconnectedError as exc:
                if attempt == 2:
                    raise UpstreamFailure("connection_reset", f"{backend.name}: {exc}") from None
            except aiohttp.ClientConnectorError as exc:
                raise UpstreamFailure(
                    "connect_error", f"{backend.name}: cannot connect ({exc.strerror})"
                ) from None
            except (aiohttp.ConnectionTimeoutError, aiohttp.SocketTimeoutError, TimeoutError):
                raise UpstreamFailure("timeout", f"{backend.name}: timed out") from None
            except aiohttp.ClientError as exc:
                raise UpstreamFailure("connection_reset", f"{backend.name}: {type(exc).__name__}") from None
        raise AssertionError("unreachable")

    async def _first_chunk(self, backend: Backend, response: aiohttp.ClientResponse) -> bytes:
        """Wait for the stream's first bytes: until then the request can still move.
        (On failure forward() closes the response: closed, not pooled, makes vLLM abort.)"""
        try:
            async with asyncio.timeout(backend.config.timeouts.first_byte_s):
                first = await response.content.readany()
        except TimeoutError:
            raise UpstreamFailure("first_byte_timeout", f"{backend.name}: no first byte in time") from None
        except aiohttp.ClientError as exc:
            raise UpstreamFailure("connection_reset", f"{backend.name}: {type(exc).__name__}") from None
        if not first:
            raise UpstreamFailure("empty_stream", f"{backend.name}: closed the stream at once")
        return first

    async def _read_whole(self, backend: Backend, response: aiohttp.ClientResponse) -> bytes:
        try:
            return await response.read()
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise UpstreamFailure("connection_reset", f"{backend.name}: {type(exc).__name__}") from None

    def _whole(self, response: aiohttp.ClientResponse, data: bytes, row: UsageRow, t0: float) -> Response:
        row.status = response.status
        if response.status >= 400:
            data = normalise_upstream_error(response.status, data)
            row.error_type = f"upstream_{response.status}"
            row.prompt_tokens = 0  # a rejected request generated (and bills) nothing
        else:
            self._usage_from_body(data, row)
        row.latency_ms = (time.perf_counter() - t0) * 1000
        self.finish(row)
        media = response.headers.get("Content-Type", "application/json")
        return Response(data, status_code=response.status, media_type=media, headers=route_headers(row))

    def _usage_from_body(self, data: bytes, row: UsageRow) -> None:
        try:
            doc = orjson.loads(data)
            usage = doc.get("usage")
        except (orjson.JSONDecodeError, AttributeError):
            doc = usage = None
        if row.prompt_text is not None:  # database.store_text: keep the answer's text too
            transcript = Transcript()
            transcript.add_response(doc)
            row.completion_text = transcript.text()
        if isinstance(usage, dict):
            usage_into_row(usage, row)
        else:
            row.tokens_estimated = True

    def _stream(
        self,
        backend: Backend,
        endpoint: Endpoint,
        response: aiohttp.ClientResponse,
        first: bytes,
        client_usage: bool,
        row: UsageRow,
        t0: float,
    ) -> RelayResponse:
        row.status = 200
        row.ttft_ms = (time.perf_counter() - t0) * 1000
        relay = SSERelay(
            strip_usage_chunk=not client_usage,
            strip_null_usage=backend.kind == "openai" and not client_usage,
            # The prompt text is on the row only when database.store_text is on.
            transcript=Transcript() if row.prompt_text is not None else None,
        )

        async def events() -> AsyncIterator[bytes]:
            complete = False
            try:
                out = relay.feed(first)
                try:
                    while not relay.done:
                        if out:
                            yield out
                        chunk = await response.content.readany()
                        # End of body without [DONE]: finish() adds an error event.
                        out = relay.feed(chunk) if chunk else relay.finish()
                except (aiohttp.ClientError, TimeoutError) as exc:
                    out = relay.abort(f"upstream {backend.name} failed mid-stream: {type(exc).__name__}")
                # `out` ends the stream. Count the request first, so that whoever
                # has seen the end of a stream also sees its usage row and metrics.
                complete = True
                backend.report(endpoint, ok=not relay.errored)
                self._settle(relay, row, t0)
                if out:
                    yield out
            finally:
                if complete:
                    response.release()
                else:
                    # The client went away (this runs on cancellation): closing
                    # the connection, not pooling it, makes vLLM abort the
                    # request and free its slot at once.
                    response.close()
                    row.status, row.error_type = 499, "client_disconnected"
                    self._settle(relay, row, t0)
                backend.release(endpoint)

        return RelayResponse(
            events(),
            status_code=200,
            media_type=response.headers.get("Content-Type", "text/event-stream"),
            headers={**route_headers(row), "Cache-Control": "no-cache"},
        )

    def _settle(self, relay: SSERelay, row: UsageRow, t0: float) -> None:
        if relay.errored and row.error_type is None:
            row.error_type = "stream_error"
        if relay.transcript is not None:
            row.completion_text = relay.transcript.text()
        if relay.usage is not None:
            usage_into_row(relay.usage, row)
        else:
            # The caller put an estimate of prompt tokens on the row.
            row.tokens_estimated = True
            row.completion_tokens = relay.events
        row.latency_ms = (time.perf_counter() - t0) * 1000
        self.finish(row)

    def _no_backend(
        self,
        failures: list[Unavailable],
        last_error: tuple[int, bytes] | None,
        row: UsageRow,
        t0: float,
    ) -> Response:
        row.latency_ms = (time.perf_counter() - t0) * 1000
        row.fallback_reason = failures[-1].reason if failures else None
        row.prompt_tokens = 0  # nothing was generated
        if last_error is not None:
            status, data = last_error
            row.status, row.error_type = status, f"upstream_{status}"
            self.finish(row)
            return Response(
                normalise_upstream_error(status, data),
                status_code=status,
                media_type="application/json",
                headers=route_headers(row),
            )
        tried = "; ".join(f.message for f in failures)
        unconfigured = [f for f in failures if f.reason == "unconfigured"]
        if unconfigured and len(unconfigured) == len(failures):
            error = ProxyError(503, tried, code="backend_unconfigured", type="server_error")
        elif any(isinstance(f, UpstreamFailure) for f in failures):
            error = ProxyError(502, f"no backend could answer: {tried}", code="upstream_unavailable")
        else:
            error = ProxyError(503, f"no backend could answer: {tried}", code="no_backend_available")
        row.status, row.error_type = error.status, error.code
        self.finish(row)
        return error.response(route_headers(row))


def route_headers(row: UsageRow) -> dict[str, str]:
    return {
        "x-offload-route": row.backend or "none",
        "x-offload-intent": row.intent or "none",
        "x-offload-fallback": "1" if row.fallback else "0",
        "x-request-id": row.request_id,
    }
