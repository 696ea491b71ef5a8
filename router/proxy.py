"""Forwarding: one path for every API, through that API's dialect.

The body arrives parsed once (a dict). For each backend tried, the dialect
adapts a shallow copy (model, extras, thinking, what that kind rejects) and
serialises it once. Before the first byte reaches the client, a failure moves
the request to the next candidate (``Pool.candidates``: the decided backend
and its ``routing.fallbacks``, each serving the request's API, and only those
the caller's key may use); after it, a stream ends the way its API ends a
failure, never in a silent truncation. Every request's usage row is settled in
one place, :meth:`Forwarder.settle`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from starlette.responses import Response

from router.accounting import UsageRow
from router.backends import Backend, Endpoint, Pool, Unavailable, own_resource_error
from router.config import CapacityConfig
from router.dialects import Adapted, Dialect, Usage, Whole
from router.errors import ProxyError, SecretMask, normalise_upstream_error
from router.policy import PINNED, Decision
from router.response_ids import ResponseOwners
from router.streaming import RelayResponse

log = logging.getLogger("offload.proxy")

# Upstream headers a client needs to back off as the upstream asks (SDKs honour them).
_RELAYED_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry")
_RELAYED_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-")


class UpstreamFailure(Unavailable):
    """The request failed before any byte of an answer: try the next backend. (An
    ``Unavailable`` means no attempt was made; telling them apart gives 502 or 503.)
    ``blames_backend`` is false when the proxy itself ran out of descriptors or memory."""

    def __init__(self, reason: str, message: str, blames_backend: bool = True) -> None:
        super().__init__(reason, message)
        self.blames_backend = blames_backend


class AnswerTooLarge(Exception):
    """A non-streamed answer passed the backend's ``max_response_bytes``."""


@dataclass(slots=True)
class Call:
    """One request on its way through the forwarder, as plain data."""

    dialect: Dialect
    body: dict[str, Any]
    decision: Decision
    row: UsageRow
    t0: float  # perf_counter at arrival
    client_model: str | None = None  # the client's model name, when the proxy does not know it
    headers: dict[str, str] | None = None  # client headers that travel upstream (anthropic-version...)
    query: str = ""  # the client's query string, passed on (Claude Code's ?beta=true)
    allowed: frozenset[str] | None = None  # backends and routes the caller's key may use
    thinking_note: str = ""  # the x-offload-thinking header, once a backend answers
    # Set when a shadow run waits for the real answer's text, to judge its own against it.
    answer: asyncio.Future[str | None] | None = None
    answer_text: str | None = None

    def answered(self) -> None:
        """The client has its whole answer (called once the response is sent): a waiting
        shadow run may start now, without sharing a moment with the real request."""
        if self.answer is not None and not self.answer.done():
            self.answer.set_result(self.answer_text)

    @property
    def wants_text(self) -> bool:
        """Collect the answer's text: to store it (database.store_text) or for a shadow run."""
        return self.row.prompt_text is not None or self.answer is not None


class Forwarder:
    def __init__(
        self,
        pool: Pool,
        capacity: CapacityConfig,
        finish: Callable[[UsageRow], None],
        on_fallback: Callable[[str, str, str], None],
        mask: SecretMask,
        owners: ResponseOwners,
    ) -> None:
        self.pool = pool
        self.capacity = capacity
        self.finish = finish  # accounting + metrics, once per request
        self.on_fallback = on_fallback
        self.mask = mask  # configured secrets, masked in anything relayed from an error
        self.owners = owners  # response id → the backend that minted it

    # ----------------------------------------------------------- settling

    def settle(
        self,
        call: Call,
        status: int,
        usage: Usage | None,
        *,
        billed: bool = True,
        error_type: str | None = None,
        completion_estimate: int = 0,
        text: str | None = None,
    ) -> None:
        """Settle the request's usage row and hand it to accounting and metrics: the one
        place a row is completed. Without usage, a request that reached a model keeps its
        prompt estimate (flagged); one that generated nothing (``billed`` false) counts none."""
        row = call.row
        row.status = status
        if error_type is not None and row.error_type is None:
            row.error_type = error_type
        if usage is not None:
            row.prompt_tokens, row.completion_tokens, row.cached_tokens, row.reasoning_tokens = usage
        elif not billed:
            row.prompt_tokens = 0
        else:
            row.tokens_estimated = True
            row.completion_tokens = completion_estimate
        if text is not None and row.prompt_text is not None:
            row.completion_text = text
        call.answer_text = text if status < 400 else None
        row.latency_ms = (time.perf_counter() - call.t0) * 1000
        self.finish(row)

    def refuse(self, call: Call, error: ProxyError) -> Response:
        """Answer with the proxy's own error once a row exists (nothing was generated)."""
        self.settle(call, error.status, None, billed=False, error_type=error.code or f"http_{error.status}")
        return error.response(route_headers(call), shape=call.dialect.shape)

    # ----------------------------------------------------------- forwarding

    async def forward(self, call: Call) -> Response:
        """Try the candidates in order; answer from the first that can."""
        candidates = self._candidates(call)
        if not candidates:
            return self.refuse(call, self._unserved(call))
        failures: list[Unavailable] = []
        last_error: tuple[int, bytes, dict[str, str]] | None = None
        previous: Backend | None = None
        for backend in candidates:
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
                adapted = call.dialect.adapt(call.body, backend, call.client_model)
                streaming = call.dialect.streams(call.body)
                deadline = _deadline(backend, streaming)
                response = await self._attempt(backend, endpoint, call, adapted.payload, deadline)
                if response.status >= 500 or response.status == 408:
                    # Worth another backend; keep the answer in case none is left.
                    last_error = (
                        response.status,
                        await self._read_error(response),
                        relayed_headers(response),
                    )
                    backend.report(endpoint, ok=False)
                    failures.append(UpstreamFailure(f"http_{response.status}", f"HTTP {response.status}"))
                    continue
                self._served_by(call, backend, adapted, failures)
                if streaming and response.status == 200:
                    first = await self._first_chunk(backend, response, deadline)
                    committed = True  # the stream owns the slot from here
                    return self._stream(call, backend, endpoint, response, first, adapted)
                data = await self._read_whole(backend, response)
                whole = call.dialect.whole(data, call.wants_text) if response.status < 400 else None
                if whole is not None and not whole.readable:
                    # Nothing reached the client yet: the next candidate may answer properly.
                    raise UpstreamFailure(
                        "malformed_answer", f"{backend.name}: HTTP {response.status} with no JSON answer"
                    )
                backend.report(endpoint, ok=True)
                return self._whole(call, backend, response, data, whole)
            except UpstreamFailure as exc:
                if exc.blames_backend:
                    backend.report(endpoint, ok=False)
                failures.append(exc)
            except AnswerTooLarge:
                backend.report(endpoint, ok=True)  # it answered; the answer is the problem
                limit = backend.config.max_response_bytes
                message = (
                    f"the answer of backend {backend.name!r} is larger than its max_response_bytes ({limit})"
                )
                return self.refuse(call, ProxyError(502, message, code="upstream_answer_too_large"))
            finally:
                if not committed:
                    # Also on cancellation (client gone): closing the connection,
                    # not pooling it, is what makes vLLM abort the request.
                    if response is not None:
                        response.close()
                    backend.release(endpoint)
        return self._no_backend(call, failures, last_error)

    def _candidates(self, call: Call) -> list[Backend]:
        chain = self.pool.candidates(call.decision.backend, call.dialect.api)
        if call.decision.reason == PINNED:
            # State that lives in one backend (a previous response) cannot move.
            chain = [b for b in chain if b.name == call.decision.backend]
        allowed = call.allowed
        if allowed is not None:
            # A restricted key waits for, or is refused by, the backends it may use: never
            # a (paid) fallback outside them.
            chain = [b for b in chain if b.name in allowed or b.route in allowed]
        return chain

    async def answer_idle(
        self, call: Call, backend: Backend, body: dict[str, Any], reserve: int
    ) -> tuple[int, Whole]:
        """Answer ``body`` (a non-streamed copy of the call's request) on an idle slot of
        ``backend``: a shadow run. Unavailable when the box has no slot above ``reserve``;
        cancelled (the slot freed at once) when real traffic needs it."""
        endpoint = backend.take_idle(reserve)
        response: aiohttp.ClientResponse | None = None
        try:
            adapted = call.dialect.adapt(body, backend, call.client_model)
            response = await self._attempt(backend, endpoint, call, adapted.payload, None)
            data = await self._read_whole(backend, response)
            if response.status >= 400:
                return response.status, Whole(None)
            return response.status, call.dialect.whole(data, True)
        finally:
            if response is not None:
                response.close()  # closed, not pooled: a cancelled copy aborts on vLLM at once
            backend.release(endpoint)

    def _unserved(self, call: Call) -> ProxyError:
        api, decision = call.dialect.api, call.decision
        if call.allowed is not None and self.pool.candidates(decision.backend, api):
            return ProxyError(
                503,
                f"no backend that this key may use ({', '.join(sorted(call.allowed))}) serves this request",
                code="no_allowed_backend",
            )
        return ProxyError(
            503,
            f"no backend on route {decision.route!r} or its fallbacks serves the {api} API: add "
            f"{api!r} to backends.<name>.apis, or configure a backend whose kind serves it",
            code="api_not_served",
            type="server_error",
        )

    @staticmethod
    def _served_by(call: Call, backend: Backend, adapted: Adapted, failures: list[Unavailable]) -> None:
        row = call.row
        row.backend, row.route = backend.name, backend.route
        row.thinking = adapted.thinking
        call.thinking_note = adapted.thinking_note
        if failures:
            row.fallback, row.fallback_reason = True, failures[-1].reason

    def _queue_timeout(self, backend: Backend) -> float:
        if self.capacity.policy == "queue" and backend.config.max_concurrency:
            return self.capacity.queue_timeout_s
        return 0.0

    async def _attempt(
        self, backend: Backend, endpoint: Endpoint, call: Call, payload: bytes, deadline: float | None
    ) -> aiohttp.ClientResponse:
        """POST once (response headers by ``deadline`` for a stream); retry once a pooled
        connection that the server had already closed."""
        assert endpoint.session is not None
        headers = {
            "Content-Type": "application/json",
            "X-Request-Id": call.row.request_id,
            **backend.auth_headers,
            **(call.headers or {}),
        }
        url = endpoint.url + call.dialect.path + (f"?{call.query}" if call.query else "")
        for attempt in (1, 2):
            try:
                async with asyncio.timeout_at(deadline):
                    return await endpoint.session.post(url, data=payload, headers=headers)
            except aiohttp.ServerDisconnectedError as exc:
                if attempt == 2:
                    raise UpstreamFailure("connection_reset", f"{backend.name}: {exc}") from None
            except aiohttp.ClientConnectorError as exc:
                if own_resource_error(exc):
                    raise _own_failure(backend) from None
                raise UpstreamFailure(
                    "connect_error", f"{backend.name}: cannot connect ({exc.strerror})"
                ) from None
            except TimeoutError:
                reason = "first_byte_timeout" if deadline is not None else "timeout"
                raise UpstreamFailure(reason, f"{backend.name}: no answer in time") from None
            except (aiohttp.ConnectionTimeoutError, aiohttp.SocketTimeoutError):
                raise UpstreamFailure("timeout", f"{backend.name}: timed out") from None
            except aiohttp.ClientError as exc:
                raise UpstreamFailure("connection_reset", f"{backend.name}: {type(exc).__name__}") from None
            except OSError as exc:
                if own_resource_error(exc):
                    raise _own_failure(backend) from None
                raise UpstreamFailure("connect_error", f"{backend.name}: {exc.strerror}") from None
        raise AssertionError("unreachable")

    async def _read_error(self, response: aiohttp.ClientResponse) -> bytes:
        try:
            return await response.content.read(64 * 1024)  # an error is small; a bigger one is cut
        except (aiohttp.ClientError, TimeoutError):
            return b""  # normalise_upstream_error still says which status it was

    async def _first_chunk(
        self, backend: Backend, response: aiohttp.ClientResponse, deadline: float | None
    ) -> bytes:
        """Wait for the stream's first bytes: until then the request can still move.
        (On failure forward() closes the response: closed, not pooled, makes vLLM abort.)"""
        try:
            async with asyncio.timeout_at(deadline):
                first = await response.content.readany()
        except TimeoutError:
            raise UpstreamFailure("first_byte_timeout", f"{backend.name}: no first byte in time") from None
        except aiohttp.ClientError as exc:
            raise UpstreamFailure("connection_reset", f"{backend.name}: {type(exc).__name__}") from None
        if not first:
            raise UpstreamFailure("empty_stream", f"{backend.name}: closed the stream at once")
        return first

    async def _read_whole(self, backend: Backend, response: aiohttp.ClientResponse) -> bytes:
        """The whole answer, never more than the backend's ``max_response_bytes`` in memory."""
        limit = backend.config.max_response_bytes
        if (response.content_length or 0) > limit:
            raise AnswerTooLarge
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.content.iter_any():
                size += len(chunk)
                if size > limit:
                    raise AnswerTooLarge
                chunks.append(chunk)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise UpstreamFailure("connection_reset", f"{backend.name}: {type(exc).__name__}") from None
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _whole(
        self, call: Call, backend: Backend, response: aiohttp.ClientResponse, data: bytes, whole: Whole | None
    ) -> Response:
        status = response.status
        if whole is None:
            data = normalise_upstream_error(status, self.mask(data), call.dialect.shape)
            # A rejected request generated (and bills) nothing.
            self.settle(call, status, None, billed=False, error_type=f"upstream_{status}")
        else:
            if whole.response_id is not None:
                self._minted(call, backend, whole.response_id)
            self.settle(call, status, whole.usage, text=whole.text)
        media = response.headers.get("Content-Type", "application/json")
        headers = {**relayed_headers(response), **route_headers(call)}
        return Response(data, status_code=status, media_type=media, headers=headers)

    def _minted(self, call: Call, backend: Backend, response_id: str) -> None:
        call.row.response_id = response_id
        self.owners.remember(response_id, backend.name, call.row.client)

    def _stream(
        self,
        call: Call,
        backend: Backend,
        endpoint: Endpoint,
        response: aiohttp.ClientResponse,
        first: bytes,
        adapted: Adapted,
    ) -> RelayResponse:
        row = call.row
        row.ttft_ms = (time.perf_counter() - call.t0) * 1000
        relay = call.dialect.relay(backend, adapted.client_wants_usage, call.wants_text)

        def settle(status: int, error_type: str | None = None) -> None:
            if relay.response_id is not None:
                self._minted(call, backend, relay.response_id)
            if relay.errored and error_type is None:
                error_type = relay.failure or "stream_error"
            self.settle(
                call,
                status,
                relay.usage,
                error_type=error_type,
                completion_estimate=relay.events,
                text=relay.text(),
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
                        # End of body without the API's normal end: finish() says so.
                        out = relay.feed(chunk) if chunk else relay.finish()
                except (aiohttp.ClientError, TimeoutError) as exc:
                    out = relay.abort(f"upstream {backend.name} failed mid-stream: {type(exc).__name__}")
                # `out` ends the stream. Count the request first, so that whoever
                # has seen the end of a stream also sees its usage row and metrics.
                complete = True
                backend.report(endpoint, ok=not relay.errored)
                settle(200)
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
                    settle(499, "client_disconnected")
                backend.release(endpoint)

        return RelayResponse(
            events(),
            status_code=200,
            media_type=response.headers.get("Content-Type", "text/event-stream"),
            headers={**route_headers(call), "Cache-Control": "no-cache"},
        )

    def _no_backend(
        self, call: Call, failures: list[Unavailable], last_error: tuple[int, bytes, dict[str, str]] | None
    ) -> Response:
        call.row.fallback_reason = failures[-1].reason if failures else None
        if last_error is not None:
            status, data, headers = last_error
            self.settle(call, status, None, billed=False, error_type=f"upstream_{status}")
            return Response(
                normalise_upstream_error(status, self.mask(data), call.dialect.shape),
                status_code=status,
                media_type="application/json",
                headers={**headers, **route_headers(call)},
            )
        tried = "; ".join(f.message for f in failures)
        unconfigured = [f for f in failures if f.reason == "unconfigured"]
        if unconfigured and len(unconfigured) == len(failures):
            error = ProxyError(503, tried, code="backend_unconfigured", type="server_error")
        elif any(isinstance(f, UpstreamFailure) and f.blames_backend for f in failures):
            error = ProxyError(502, f"no backend could answer: {tried}", code="upstream_unavailable")
        else:
            error = ProxyError(503, f"no backend could answer: {tried}", code="no_backend_available")
        return self.refuse(call, error)


def _deadline(backend: Backend, streaming: bool) -> float | None:
    """A stream's response headers and first bytes are due within ``first_byte_s``. A whole
    answer's headers come with the answer itself, so ``read_s`` bounds those."""
    if not streaming:
        return None
    return asyncio.get_running_loop().time() + backend.config.timeouts.first_byte_s


def _own_failure(backend: Backend) -> UpstreamFailure:
    log.error("cannot reach %s: the proxy is out of file descriptors or memory", backend.name)
    return UpstreamFailure(
        "proxy_resources", "the proxy is out of descriptors or memory", blames_backend=False
    )


def relayed_headers(response: aiohttp.ClientResponse) -> dict[str, str]:
    """The upstream's back-off headers (Retry-After, rate-limit state), for the client's SDK."""
    return {
        name: value
        for name, value in response.headers.items()
        if (lower := name.lower()) in _RELAYED_HEADERS or lower.startswith(_RELAYED_PREFIXES)
    }


def route_headers(call: Call) -> dict[str, str]:
    row = call.row
    headers = {
        "x-offload-route": row.backend or "none",
        "x-offload-intent": row.intent or "none",
        "x-offload-fallback": "1" if row.fallback else "0",
        "x-request-id": row.request_id,
    }
    if call.thinking_note:
        headers["x-offload-thinking"] = call.thinking_note
    return headers
