"""Where forwarding meets admission: one :class:`EndpointLoad` per vLLM endpoint with
``max_ttft_s``, and the waiting that the pure state machine cannot do itself.

Forwarding asks :meth:`Gates.enter` after it has a slot and the adapted body
(whose size is the token estimate's input). It gets a :class:`Pass` (the ticket
and its first-byte deadline), or an ``Unavailable`` with reason ``ttft`` or
``kv`` that moves the request to its next candidate like any capacity refusal.
A request with no next candidate waits, in a queue bounded in tokens, until
its expected TTFT fits or nothing is ahead of it. Shadow runs pass the same
gate with ``may_spill`` and no waiting: they never add to a real request's wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from router.forward.admission import ADMIT, SPILL, EndpointLoad, Rate, Ticket
from router.forward.backends import Backend, Endpoint, Pool, Unavailable
from router.forward.prefix_hints import Keys, PrefixHints, keys

if TYPE_CHECKING:
    from router.dialects import Usage
    from router.forward.call import Call

# An endpoint's KV size until vLLM's /metrics or kv_tokens says: the Spark's, for prefix hints.
_DEFAULT_KV_TOKENS = 825_000

_MESSAGES = {
    "ttft": "{name}: expected time to first token {expected:.0f}s is past max_ttft_s ({limit:g}s)",
    "kv": "{name}: its KV cache would overflow with the work already admitted",
}


@dataclass(slots=True)
class Pass:
    """An admitted request: its tokens are counted on ``load`` until :meth:`Gates.done`."""

    load: EndpointLoad
    ticket: Ticket
    size: int  # the body bytes its estimate came from
    keys: Keys | None  # its prefix hints' keys

    @property
    def deadline_s(self) -> float:
        return self.ticket.deadline_s

    @property
    def expected_ttft_ms(self) -> float:
        return self.ticket.expected_ttft_s * 1000


class Gates:
    """Every counted endpoint's token account. Each lives on its endpoint (``Endpoint.load``),
    so variants share their server's, and /readyz and /metrics show it with the endpoint."""

    def __init__(self, pool: Pool) -> None:
        self.loads: dict[str, EndpointLoad] = {}
        self._changed: dict[int, asyncio.Event] = {}  # id(load) → set when its account changes
        self.hints: dict[int, PrefixHints] = {}  # id(load) → what its prefix cache holds
        for backend in pool.backends.values():
            bc = backend.config
            if bc.kind != "vllm" or bc.max_ttft_s is None or bc.variant_of is not None:
                continue
            queue = (
                bc.queue_tokens if bc.queue_tokens is not None else int(2 * bc.max_ttft_s * bc.prefill_tps)
            )
            for endpoint in backend.endpoints:
                endpoint.load = self.loads[endpoint.url] = EndpointLoad(
                    max_ttft_s=bc.max_ttft_s,
                    prefill=Rate.starting_at(bc.prefill_tps),
                    decode=Rate.starting_at(bc.decode_tps),
                    kv_capacity=bc.kv_tokens,
                    queue_tokens=queue,
                    first_byte_s=bc.timeouts.first_byte_s,
                )

    def _hints(self, load: EndpointLoad) -> PrefixHints:
        hints = self.hints.setdefault(id(load), PrefixHints(_DEFAULT_KV_TOKENS))
        hints.kv_tokens = load.kv_capacity or _DEFAULT_KV_TOKENS
        return hints

    async def enter(
        self, backend: Backend, endpoint: Endpoint, call: Call, size: int, may_spill: bool
    ) -> Pass | None:
        """Admit ``call`` (``size`` body bytes to the model), spill it (Unavailable) or wait
        its turn. None where admission does not count tokens (no ``max_ttft_s``)."""
        load = self.loads.get(endpoint.url)
        if load is None:
            return None
        hints, k = self._hints(load), keys(call.dialect.api, call.body, call.facts.session)
        cached, warm, first = hints.cached(k), hints.warm(k), hints.first_of_its_kind(k)
        waited = 0
        try:
            while True:
                now = time.monotonic()
                admit = load.decide(size, now, may_spill=may_spill, cached=cached, warm=warm, first=first)
                if admit.verdict == ADMIT:
                    return Pass(load, load.admit(admit, now), size, k)
                if await backend.reclaim_from_shadows():
                    continue  # shadow work on the box gives way before a real request spills or waits
                if admit.verdict == SPILL:
                    backend.spills += 1
                    message = _MESSAGES[admit.reason or "ttft"].format(
                        name=backend.name, expected=admit.expected_ttft_s, limit=load.max_ttft_s
                    )
                    raise Unavailable(admit.reason or "ttft", message)
                if not waited:
                    waited = admit.uncached_tokens
                    load.waiting_tokens += waited
                await self._wait(load)
        finally:
            load.waiting_tokens -= waited

    def enter_idle(self, endpoint: Endpoint, size: int) -> Pass | None:
        """Shadow work: only onto an endpoint that owes no prefill and has KV room for it,
        counted like any request (so the next real request sees it, and cancels it rather
        than spill or wait behind it). Unavailable ``busy`` otherwise."""
        load = self.loads.get(endpoint.url)
        if load is None:
            return None
        now = time.monotonic()
        admit = load.decide(size, now, may_spill=True)
        if load.owed or admit.verdict != ADMIT:
            raise Unavailable("busy", "the box owes prefill to real requests: no shadow work now")
        return Pass(load, load.admit(admit, now), size, None)

    async def _wait(self, load: EndpointLoad) -> None:
        """Until the account changes (a first byte, an end), or the head's progress may have
        brought the expected TTFT down (re-checked at a tenth of max_ttft_s)."""
        event = self._changed.setdefault(id(load), asyncio.Event())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), load.max_ttft_s / 10)

    def _signal(self, load: EndpointLoad) -> None:
        """Wake every request waiting on ``load``; the next wait starts on a fresh event."""
        event = self._changed.pop(id(load), None)
        if event is not None:
            event.set()

    def first_byte(self, admitted: Pass | None) -> None:
        if admitted is not None:
            admitted.load.first_byte(admitted.ticket, time.monotonic())
            self._signal(admitted.load)

    def settle(self, admitted: Pass | None, usage: Usage | None) -> Pass | None:
        """:meth:`done`, handing back the pass (its expected TTFT goes to the usage row)."""
        self.done(admitted, usage)
        return admitted

    def done(self, admitted: Pass | None, usage: Usage | None) -> None:
        """It ended: with vLLM's usage learn from it; without, forget it. Safe to call twice
        (the second does nothing)."""
        if admitted is None or admitted.ticket.id not in admitted.load.held:
            return
        if usage is None:
            admitted.load.abandoned(admitted.ticket)
        else:
            prompt, cached, completion = usage.prompt, usage.cached, usage.completion
            now = time.monotonic()
            admitted.load.finished(admitted.ticket, now, admitted.size, prompt, cached, completion)
            self._hints(admitted.load).remember(admitted.keys, prompt, cached, completion)
        self._signal(admitted.load)


def first_byte_deadline(backend: Backend, streaming: bool, admitted: Pass | None) -> float | None:
    """A stream's headers and first bytes are due within ``first_byte_s``, or the deadline its
    admission gave (router/forward/admission.py). A whole answer's headers come with the answer
    itself, so ``read_s`` bounds those."""
    if not streaming:
        return None
    wait = admitted.deadline_s if admitted is not None else backend.config.timeouts.first_byte_s
    return asyncio.get_running_loop().time() + wait


def queue_full(backend: Backend, status: int, error: bytes) -> bool:
    """Is this vLLM refusing for its own queue limits (--max-num-queued-reqs/tokens), in its
    own words? A capacity refusal, not a failure of the box; any other 503 is a failure."""
    return backend.kind == "vllm" and status == 503 and b"cannot accept new requests" in error
