"""Forwarding: one path for every API, through that API's dialect.

The body arrives parsed once (a dict). For each backend tried, the dialect
adapts a shallow copy (model, extras, thinking, what that kind rejects) and
serialises it once. Before the first byte reaches the client, a failure moves
the request to the next candidate (``Pool.candidates``: the decided backend
and its ``routing.fallbacks``, each serving the request's API, and only those
the caller's key may use); after it, a stream ends the way its API ends a
failure, never in a silent truncation. Nothing here changes the call: every request
ends in one immutable :class:`~router.forward.call.Outcome`, built in one place
(:meth:`Forwarder._settle`) and handed to ``finish`` (its usage row, metrics, limits).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from starlette.responses import Response
from starlette.types import Receive

from router.config import KIND_APIS, CapacityConfig
from router.dialects import Adapted, StreamRelay, Usage, Whole
from router.errors import ProxyError, SecretMask, configuration_error, error_message, normalise_upstream_error
from router.forward import upstream
from router.forward.admission_gate import Gates, Pass, first_byte_deadline, queue_full
from router.forward.backends import Backend, Endpoint, Pool, Unavailable
from router.forward.call import Call, Outcome, Served
from router.forward.headers import relayed_headers, route_headers
from router.forward.plan import candidates_for
from router.forward.response_ids import ResponseOwners
from router.forward.streaming import RelayResponse, cancel_on_disconnect
from router.forward.upstream import AnswerTooLarge, UpstreamFailure

# Admission's refusals on one endpoint (router/forward/admission.py): the backend's next may take it.
_ADMISSION_REASONS = ("ttft", "kv")
# Why a backend was passed over that only the operator can change: never worth a retry.
_CONFIGURATION_REASONS = ("unconfigured", "api_not_served")


@dataclass(slots=True)
class _Trail:
    """How far one forward() got: what a client leaving midway settles with."""

    served: Served | None = None
    failures: list[Unavailable] = field(default_factory=list)
    admitted: Pass | None = None  # the current attempt's tokens on a vLLM endpoint with max_ttft_s
    last_error: tuple[int, bytes, dict[str, str]] | None = None  # the last 5xx/408, kept to relay


class Forwarder:
    def __init__(
        self,
        pool: Pool,
        capacity: CapacityConfig,
        finish: Callable[[Call, Outcome], None],
        on_fallback: Callable[[str, str, str], None],
        mask: SecretMask,
        owners: ResponseOwners,
    ) -> None:
        self.pool = pool
        self.capacity = capacity
        self.finish = finish  # usage row, metrics and limits, once per request
        self.on_fallback = on_fallback
        self.mask = mask  # configured secrets, masked in anything relayed from an error
        self.owners = owners  # response id → the backend that minted it
        self.gates = Gates(pool)  # admission by expected time to first token

    # ----------------------------------------------------------- settling

    def _settle(
        self,
        call: Call,
        trail: _Trail,
        status: int,
        usage: Usage | None = None,
        *,
        billed: bool = True,
        error_type: str | None = None,
        completion_estimate: int = 0,
        text: str | None = None,
        ttft_ms: float | None = None,
        response_id: str | None = None,
        detail: str | None = None,
    ) -> None:
        """The request is over: its one :class:`Outcome`, handed to ``finish``. Without
        usage, a request that reached a model is estimated; one that generated nothing
        (``billed`` false) counts none."""
        failures = trail.failures
        admitted = self.gates.settle(trail.admitted, usage if status < 400 else None)  # learns from usage
        outcome = Outcome(
            status=status,
            latency_ms=(time.perf_counter() - call.facts.t0) * 1000,
            served=trail.served,
            usage=usage,
            billed=billed,
            completion_estimate=completion_estimate,
            error_type=error_type,
            fallback_reason=failures[-1].reason if failures else None,
            ttft_ms=ttft_ms,
            response_id=response_id,
            text=text if call.wants_text else None,
            detail=detail,
            expected_ttft_ms=admitted.expected_ttft_ms if admitted and status < 400 else None,
        )
        self.finish(call, outcome)

    def _refuse(self, call: Call, trail: _Trail, error: ProxyError) -> Response:
        """Answer with the proxy's own error (nothing was generated)."""
        code = error.code or f"http_{error.status}"
        self._settle(call, trail, error.status, billed=False, error_type=code, detail=error.message)
        return error.response(route_headers(call, trail.served), shape=call.dialect.shape)

    # ----------------------------------------------------------- forwarding

    async def forward(self, call: Call, receive: Receive) -> Response:
        """Answer from the first candidate that can. Until it answers (or a stream's first
        bytes arrive) a client that leaves cancels the attempt at once: closing the upstream
        connection makes vLLM abort the request and free its slot. Once a stream flows,
        RelayResponse watches instead."""
        trail = _Trail()

        def disconnected() -> Response:
            self._settle(call, trail, 499, error_type="client_disconnected")
            return Response(status_code=499)

        return await cancel_on_disconnect(receive, self._forward(call, trail), disconnected)

    async def _forward(self, call: Call, trail: _Trail) -> Response:
        """Try the candidates in order."""
        candidates = self._candidates(call)
        if not candidates:
            return self._refuse(call, trail, self._unserved(call))
        failures = trail.failures
        if candidates[0].route != call.decision.route:
            # The decided route has no backend for this API: its traffic goes along the
            # fallbacks to one that has (the local box serves all three), and the row says why.
            failures.append(
                Unavailable("api_not_served", f"route {call.decision.route!r} has no backend for it")
            )
            self.on_fallback(call.decision.backend, candidates[0].name, "api_not_served")
        previous: Backend | None = None
        for backend in candidates:
            if previous is not None:
                self.on_fallback(previous.name, backend.name, failures[-1].reason)
            previous = backend
            answer = await self._on_backend(call, trail, backend, last=backend is candidates[-1])
            if answer is not None:
                return answer
        return self._no_backend(call, trail)

    async def _on_backend(self, call: Call, trail: _Trail, backend: Backend, last: bool) -> Response | None:
        """The answer of one backend, or None to try the next. Its endpoint is the session's
        home or next by affinity; one whose admission refuses the request (``ttft``, ``kv``)
        passes it to the backend's next endpoint before the next backend."""
        home = call.seen.box if call.seen is not None else None
        refused: frozenset[str] = frozenset()
        while True:
            try:
                endpoint = await backend.acquire(
                    self._queue_timeout(backend), call.facts.session, home, refused
                )
            except Unavailable as exc:
                if not refused:  # after a refusal, the refusal is the reason worth reporting
                    trail.failures.append(exc)
                return None
            refused |= {endpoint.url}
            # With nowhere else to go the request waits its turn instead of spilling.
            may_spill = not last or len(refused) < len(backend.endpoints)
            answer = await self._try(call, trail, backend, endpoint, may_spill)
            spilled = trail.failures and trail.failures[-1].reason in _ADMISSION_REASONS
            if answer is not None or not spilled or len(refused) >= len(backend.endpoints):
                return answer

    async def _try(
        self, call: Call, trail: _Trail, backend: Backend, endpoint: Endpoint, may_spill: bool
    ) -> Response | None:
        """One attempt on ``endpoint`` (a slot held): the answer, or None to try the next
        candidate (the failure noted in ``trail``). Admission may spill it if ``may_spill``."""
        committed = False
        response: aiohttp.ClientResponse | None = None
        try:
            adapted = call.dialect.adapt(call.body, backend, call.client_model)
            trail.admitted = await self.gates.enter(backend, endpoint, call, len(adapted.payload), may_spill)
            deadline = first_byte_deadline(backend, call.facts.stream, trail.admitted)
            response = await upstream.post(backend, endpoint, call, adapted.payload, deadline)
            if response.status >= 500 or response.status == 408:
                await self._failed(trail, backend, endpoint, response)  # worth another backend
                return None
            trail.served = Served(
                backend.name,
                backend.route,
                adapted.thinking,
                adapted.thinking_note,
                bool(trail.failures),
                endpoint.url,
            )
            if call.facts.stream and response.status == 200:
                first = await upstream.first_chunk(backend, response, deadline)
                committed = True  # the stream owns the slot from here
                return self._stream(call, trail, backend, endpoint, response, first, adapted)
            data = await upstream.read_whole(backend, response)
            whole = call.dialect.whole(data, call.wants_text) if response.status < 400 else None
            if whole is not None and not whole.readable:
                # Nothing reached the client yet: the next candidate may answer properly.
                raise UpstreamFailure(
                    "malformed_answer", f"{backend.name}: HTTP {response.status} with no JSON answer"
                )
            backend.report(endpoint, ok=True)
            return self._whole(call, trail, backend, response, data, whole)
        except Unavailable as exc:  # a plain Unavailable is admission's spill (ttft, kv): the box is fine
            if isinstance(exc, UpstreamFailure) and exc.blames_backend:
                backend.report(endpoint, ok=False)
            trail.failures.append(exc)
            return None
        except AnswerTooLarge:
            backend.report(endpoint, ok=True)  # it answered; the answer is the problem
            limit = backend.config.max_response_bytes
            message = (
                f"the answer of backend {backend.name!r} is larger than its max_response_bytes ({limit})"
            )
            return self._refuse(call, trail, ProxyError(502, message, code="upstream_answer_too_large"))
        finally:
            if not committed:
                # Also on cancellation (client gone): closing the connection,
                # not pooling it, is what makes vLLM abort the request.
                if response is not None:
                    response.close()
                self.gates.done(trail.admitted, None)  # its tokens leave the account (done: no-op)
                backend.release(endpoint)

    def _candidates(self, call: Call) -> list[Backend]:
        return candidates_for(self.pool, call.decision, call.dialect.api, call.allowed)

    async def answer_idle(
        self, call: Call, backend: Backend, body: dict[str, Any], reserve: int
    ) -> tuple[int, Whole]:
        """Answer ``body`` (a non-streamed copy of the call's request) on an idle slot of
        ``backend``: a shadow run. Unavailable when the box has no slot above ``reserve``;
        cancelled (the slot freed at once) when real traffic needs it."""
        endpoint = backend.take_idle(reserve)
        response: aiohttp.ClientResponse | None = None
        admitted: Pass | None = None
        whole = Whole(None)
        try:
            adapted = call.dialect.adapt(body, backend, call.client_model)
            admitted = self.gates.enter_idle(endpoint, len(adapted.payload))  # the same token account
            response = await upstream.post(backend, endpoint, call, adapted.payload, None)
            data = await upstream.read_whole(backend, response)
            if response.status >= 400:
                return response.status, whole
            whole = call.dialect.whole(data, True)
            return response.status, whole
        finally:
            if response is not None:
                response.close()  # closed, not pooled: a cancelled copy aborts on vLLM at once
            self.gates.done(admitted, whole.usage)
            backend.release(endpoint)

    def _unserved(self, call: Call) -> ProxyError:
        api, decision = call.dialect.api, call.decision
        if call.allowed is not None and self.pool.candidates(decision.backend, api):
            return ProxyError(
                503,
                f"no backend that this key may use ({', '.join(sorted(call.allowed))}) serves this request",
                code="no_allowed_backend",
            )
        kinds = " or ".join(f"kind: {kind}" for kind, apis in KIND_APIS.items() if api in apis)
        return configuration_error(
            f"no backend on route {decision.route!r} or its fallbacks serves the {api} API: add a "
            f"backend with {kinds} to the config (or {api!r} to a vllm backend's apis)",
            code="api_not_served",
        )

    def _queue_timeout(self, backend: Backend) -> float:
        if self.capacity.policy == "queue" and backend.config.max_concurrency:
            return self.capacity.queue_timeout_s
        return 0.0

    async def _failed(
        self, trail: _Trail, backend: Backend, endpoint: Endpoint, response: aiohttp.ClientResponse
    ) -> None:
        """A 5xx or 408 before any byte (vLLM's own queue-full 503 is a spill, not a failure)."""
        error = await upstream.read_error(response)
        trail.last_error = (response.status, error, relayed_headers(response))
        if queue_full(backend, response.status, error):
            trail.failures.append(Unavailable("capacity", f"{backend.name}: its queue is full"))
            return
        backend.report(endpoint, ok=False)
        message = f"{backend.name} answered HTTP {response.status}"
        trail.failures.append(UpstreamFailure(f"http_{response.status}", message))

    def _whole(
        self,
        call: Call,
        trail: _Trail,
        backend: Backend,
        response: aiohttp.ClientResponse,
        data: bytes,
        whole: Whole | None,
    ) -> Response:
        status = response.status
        if whole is None:
            data = normalise_upstream_error(status, self.mask(data), call.dialect.shape)
            # A rejected request generated (and bills) nothing.
            detail = f"{backend.name} answered {status}: {error_message(data)}"
            self._settle(call, trail, status, billed=False, error_type=f"upstream_{status}", detail=detail)
        else:
            if whole.response_id is not None:
                self.owners.remember(whole.response_id, backend.name, call.facts.client, call.facts.session)
            self._settle(call, trail, status, whole.usage, text=whole.text, response_id=whole.response_id)
        media = response.headers.get("Content-Type", "application/json")
        headers = {**relayed_headers(response), **route_headers(call, trail.served)}
        return Response(data, status_code=status, media_type=media, headers=headers)

    def _stream(
        self,
        call: Call,
        trail: _Trail,
        backend: Backend,
        endpoint: Endpoint,
        response: aiohttp.ClientResponse,
        first: bytes,
        adapted: Adapted,
    ) -> RelayResponse:
        ttft_ms = (time.perf_counter() - call.facts.t0) * 1000
        self.gates.first_byte(trail.admitted)  # its prefill is done, and every one before it
        relay = call.dialect.relay(backend, adapted.client_wants_usage, call.wants_text)

        def settle(status: int, error_type: str | None = None) -> None:
            self._settle_stream(call, trail, backend, relay, ttft_ms, status, error_type)

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
            headers={**route_headers(call, trail.served), "Cache-Control": "no-cache"},
        )

    def _settle_stream(
        self,
        call: Call,
        trail: _Trail,
        backend: Backend,
        relay: StreamRelay,
        ttft_ms: float,
        status: int,
        error_type: str | None,
    ) -> None:
        if relay.response_id is not None:
            self.owners.remember(relay.response_id, backend.name, call.facts.client, call.facts.session)
        if relay.errored and error_type is None:
            error_type = relay.failure or "stream_error"
        self._settle(
            call,
            trail,
            status,
            relay.usage,
            error_type=error_type,
            completion_estimate=relay.events,
            text=relay.text(),
            ttft_ms=ttft_ms,
            response_id=relay.response_id,
        )

    def _no_backend(self, call: Call, trail: _Trail) -> Response:
        failures = trail.failures
        if trail.last_error is not None:
            status, data, headers = trail.last_error
            body = normalise_upstream_error(status, self.mask(data), call.dialect.shape)
            detail = f"{failures[-1].message}: {error_message(body)}" if failures else None
            self._settle(call, trail, status, billed=False, error_type=f"upstream_{status}", detail=detail)
            return Response(
                body,
                status_code=status,
                media_type="application/json",
                headers={**headers, **route_headers(call, trail.served)},
            )
        tried = "; ".join(f.message for f in failures)
        if failures and all(f.reason in _CONFIGURATION_REASONS for f in failures):
            error = configuration_error(tried, code="backend_unconfigured")
        elif any(isinstance(f, UpstreamFailure) and f.blames_backend for f in failures):
            error = ProxyError(502, f"no backend could answer: {tried}", code="upstream_unavailable")
        else:
            error = ProxyError(503, f"no backend could answer: {tried}", code="no_backend_available")
        return self._refuse(call, trail, error)
