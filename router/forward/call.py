"""One request on its way through the forwarder, and what came of it: plain, immutable values.

The HTTP edge builds a :class:`Facts` (what the request is) and a :class:`Call` (what the
forwarder needs to send it) once. The forwarder never changes either: it answers the client
and reports one :class:`Outcome` (who served, the status, usage, timings, what went wrong),
from which :func:`router.ledger.rows.usage_row` builds the request's usage row.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from router.decide.policy import Decision
    from router.dialects import Dialect, Usage
    from router.edge.limits import Reservation
    from router.sessions import Seen


class Facts(NamedTuple):
    """What the proxy knows of a request before forwarding it: the row's own columns.

    NamedTuples, like ``Decision``: immutable and built in C, on a path that makes several
    per request (a frozen dataclass of this size costs a few microseconds more each)."""

    request_id: str
    started_at: datetime  # UTC
    t0: float  # perf_counter at arrival: latency and time to first token count from here
    endpoint: str
    api: str
    client: str | None  # the client key's name, never the key
    model_requested: str | None
    stream: bool
    prompt_estimate: int  # prompt tokens when the upstream reports no usage
    classifier_version: str | None
    store_text: bool = False  # database.store_text: keep the prompt and the answer
    prompt_text: str | None = None
    gate_run: str | None = None  # x-offload-gate: an `offload gate` run's request, not traffic
    session: str | None = None  # its conversation (router/sessions.py)


class Call(NamedTuple):
    """What the forwarder needs to send one request, as plain data."""

    facts: Facts
    dialect: Dialect
    body: dict[str, Any]
    decision: Decision
    client_model: str | None = None  # the client's model name, when the proxy does not know it
    headers: dict[str, str] | None = None  # client headers that travel upstream (anthropic-version...)
    query: str = ""  # the client's query string, passed on (Claude Code's ?beta=true)
    allowed: frozenset[str] | None = None  # backends and routes the caller's key may use
    reservation: Reservation | None = None  # the tokens admission held for it (per-key limits)
    shadow_arm: str | None = None  # a shadow run copies it to this arm once it is answered
    seen: Seen | None = None  # where its session's last answered turn ran (the endpoint it sticks to)

    @property
    def wants_text(self) -> bool:
        """Collect the answer's text: to store it (database.store_text) or for a shadow run."""
        return self.facts.store_text or self.shadow_arm is not None


class Served(NamedTuple):
    """The backend that took the request (after any fallback), as the answer's headers say."""

    backend: str
    route: str
    thinking: str | None = None  # "on" | "off" as sent upstream; None: the model's default
    thinking_note: str = ""  # the x-offload-thinking header
    fallback: bool = False  # not the first candidate: an earlier one failed
    endpoint: str | None = None  # the URL of the endpoint that answered


class Outcome(NamedTuple):
    """What came of forwarding one request: everything its usage row needs from the forwarder.

    Without ``usage``, a request that reached a model (``billed``) keeps its prompt estimate
    and ``completion_estimate`` (flagged as estimated); one that generated nothing counts none.
    """

    status: int
    latency_ms: float
    served: Served | None = None  # None: no backend took it
    usage: Usage | None = None
    billed: bool = True
    completion_estimate: int = 0
    error_type: str | None = None
    fallback_reason: str | None = None  # the last failure, also when nothing served
    ttft_ms: float | None = None
    response_id: str | None = None  # Responses: the id the backend minted
    text: str | None = None  # the answer's text, when the call wanted it
    detail: str | None = None  # a failure's error message, for the access log (never content)
    expected_ttft_ms: float | None = None  # admission's expectation (a vLLM backend with max_ttft_s)
