"""Which backends a decided request is tried on, in order: what forwarding does, and what
``POST /offload/route`` and ``offload classify`` report, from the same function."""

from __future__ import annotations

from typing import Any

from router.decide.policy import PINNED, Decision
from router.forward.backends import Backend, Pool


def candidates_for(pool: Pool, decision: Decision, api: str, allowed: frozenset[str] | None) -> list[Backend]:
    """The decided backend and its fallbacks that serve ``api`` (``Pool.candidates``), minus
    what cannot move or what the caller's key may not use."""
    chain = pool.candidates(decision.backend, api)
    if decision.reason == PINNED:
        # State that lives in one backend (a previous response) cannot move.
        chain = [b for b in chain if b.name == decision.backend]
    if allowed is not None:
        # A restricted key waits for, or is refused by, the backends it may use: never
        # a (paid) fallback outside them.
        chain = [b for b in chain if b.name in allowed or b.route in allowed]
    return chain


def route_plan(
    pool: Pool, decision: Decision, api: str, allowed: frozenset[str] | None = None
) -> dict[str, Any]:
    """The decision as a request of ``api`` would get it now: ``backend`` and ``route`` are
    the first candidate that is up and configured (where it would be sent), ``decided_*`` what
    the policy chose, ``candidates`` the whole order; ``backend`` is None when nothing can
    serve it (the request would get an error)."""
    chain = candidates_for(pool, decision, api, allowed)
    serving = next((b for b in chain if b.up), None)
    return {
        "intent": decision.intent,
        "confidence": decision.confidence,
        "route": serving.route if serving else None,
        "backend": serving.name if serving else None,
        "reason": decision.reason,
        "api": api,
        "decided_route": decision.route,
        "decided_backend": decision.backend,
        "fallback": serving is not None and (serving is not chain[0] or serving.route != decision.route),
        "candidates": [b.name for b in chain],
        "arm": decision.arm,
        "shadow": decision.shadow.as_dict() if decision.shadow else None,
    }
