"""Prometheus metrics, all prefixed ``offload_``.

Labels come from small fixed sets (route, backend, intent, status class,
reason). Backend and accounting gauges are read from live state at scrape
time by a collector, so the request path only bumps counters.

One process, one registry: run one uvicorn worker per replica (``offload
serve`` starts exactly one) and scale with replicas, so that ``/metrics`` never
reports one worker's share as the whole.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from router.config import APIS, INTENTS
from router.decide.reasons import DECIDED, all_texts
from router.errors import ProxyError
from router.forward.breaker import BREAKER_CODES
from router.redact import redact_url

if TYPE_CHECKING:
    from router.forward.backends import Backend, Pool
    from router.ledger.models import UsageRow
    from router.ledger.writer import UsageRecorder

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# The *_created series double every counter for no dashboard's benefit.
disable_created_metrics()

# Every reason a request can leave a backend for its fallback. The series are
# created at zero up front: Prometheus's rate() cannot see the first increment
# of a series that did not exist at the previous scrape, so a lone fallback
# would otherwise never show on the dashboard or in the alert.
FALLBACK_REASONS = (
    "backend_down", "capacity", "unconfigured", "connect_error", "connection_reset",
    "timeout", "first_byte_timeout", "empty_stream", "http_408", "http_500", "http_502", "http_503", "http_504",
    "proxy_resources",
)  # fmt: skip

# Every reason the proxy itself refuses a request, before any backend sees it
# (created at zero for the same reason). Fixed names only: never a key, a key's
# name or anything the client sent.
REJECT_REASONS = (
    "rate_limited_requests", "rate_limited_tokens", "unauthorized", "forbidden",
    "too_large", "body_timeout", "invalid_request", "not_found",
)  # fmt: skip
# By the status of the ProxyError the proxy answered with; 429 is split by the
# budget that ran out (the error's ``param``: see router/edge/limits.py).
_REJECT_BY_STATUS = {
    400: "invalid_request",  # malformed JSON or Content-Length, bad fields or messages, unknown route header
    401: "unauthorized",  # missing or unknown client key
    403: "forbidden",  # key not allowed this route, or not an admin key
    404: "not_found",  # /v1/embeddings with no backend serving embeddings
    408: "body_timeout",  # body not received within server.body_read_timeout_s
    413: "too_large",  # body over server.max_body_bytes
}
_REJECT_429 = {"requests": "rate_limited_requests", "tokens": "rate_limited_tokens"}

SHADOW_OUTCOMES = ("completed", "error", "yielded", "skipped_busy")

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
_DECISION_BUCKETS = (1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 1e-2)


class Metrics:
    """Two counters between them count every request exactly once:

    - ``offload_requests_total`` (:meth:`observe`): every request that got as
      far as a routing decision and a usage row, whether a backend served it
      or not (``route="none"``: no backend could answer, or the client left
      before one did). The monthly report counts the same rows.
    - ``offload_rejected_requests_total`` (:meth:`rejected`): every request
      the proxy refused itself before that point (auth, rate limits, intake
      checks). Those raise ProxyError before a usage row exists, so they never
      reach :meth:`observe`.
    """

    def __init__(self, pool: Pool, recorder: UsageRecorder) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "offload_requests",
            "Requests answered, by the route and backend that served them.",
            ["route", "backend", "intent", "status_class", "fallback", "api"],
            registry=r,
        )
        self.tokens = Counter(
            "offload_tokens",
            "Tokens by route, direction and the API the client spoke.",
            ["route", "backend", "direction", "api"],
            registry=r,
        )
        self.duration = Histogram(
            "offload_request_duration_seconds",
            "Time from request to last byte.",
            ["route"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.ttft = Histogram(
            "offload_time_to_first_token_seconds",
            "Streams: time from request to the first SSE event.",
            ["route"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.expected_ttft = Histogram(
            "offload_expected_time_to_first_token_seconds",
            "Admission's expected time to first token (vLLM backends with max_ttft_s).",
            ["route"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.fallbacks = Counter(
            "offload_fallbacks",
            "Requests moved to a fallback backend, by reason.",
            ["from_backend", "to_backend", "reason"],
            registry=r,
        )
        self.session_moves = Counter(
            "offload_session_moves",
            "Turns of a session served by another endpoint of its backend than its last turn "
            "(its box was down, full or refused it): a prefix re-prefilled.",
            ["backend"],
            registry=r,
        )
        self.decisions = Counter(
            "offload_decisions",
            "Requests by the reason of their routing decision (rule:<name> for a team rule).",
            ["reason"],
            registry=r,
        )
        self.decision = Histogram(
            "offload_decision_seconds", "Time to decide a route.", buckets=_DECISION_BUCKETS, registry=r
        )
        rejections = Counter(
            "offload_rejected_requests",
            "Requests the proxy refused itself before forwarding (auth, rate limits, intake), by reason.",
            ["reason"],
            registry=r,
        )
        self._rejected = {reason: rejections.labels(reason) for reason in REJECT_REASONS}
        self.shadow_runs = Counter(
            "offload_shadow_runs",
            "Shadow runs of cloud-bound requests on idle local capacity, by arm and outcome.",
            ["arm", "outcome"],
            registry=r,
        )
        self._children: dict[tuple[object, tuple[str, ...]], Any] = {}
        r.register(_LiveState(pool, recorder))
        self._create_series(pool)

    def _create_series(self, pool: Pool) -> None:
        intents = ("none", *INTENTS)
        for backend in pool.backends.values():
            for api in sorted(backend.apis):
                for intent in intents:
                    for fallback in ("0", "1"):
                        self.requests.labels(backend.route, backend.name, intent, "2xx", fallback, api)
                for direction in ("prompt", "completion"):
                    self.tokens.labels(backend.route, backend.name, direction, api)
                for to in pool.candidates(backend.name, api):
                    if to is not backend:
                        for reason in FALLBACK_REASONS:
                            self.fallbacks.labels(backend.name, to.name, reason)
        for reason in all_texts(DECIDED, (rule.name for rule in pool.config.routing.rules)):
            self.decisions.labels(reason)
        for backend in pool.backends.values():
            if len(backend.endpoints) > 1:
                self.session_moves.labels(backend.name)  # at zero: a box's first move shows in rate()
        arms = {s.arm for s in pool.config.routing.shadow_runs.intents.values()}
        for arm in arms:
            for outcome in SHADOW_OUTCOMES:
                self.shadow_runs.labels(arm, outcome)
        # Requests no backend answered: every backend down or failing (5xx), or the client
        # left before an answer (499). The first one a process sees must show in rate() too.
        for api in APIS:
            for intent in intents:
                for status_class in ("5xx", "4xx"):
                    for fallback in ("0", "1"):
                        self.requests.labels("none", "none", intent, status_class, fallback, api)

    def observe(self, row: UsageRow) -> None:
        """Count one finished request (called once per request, after the response)."""
        route = row.route or "none"
        backend = row.backend or "none"
        status_class = f"{row.status // 100}xx" if row.status else "none"
        fallback = "1" if row.fallback else "0"
        api = row.api
        self._child(self.requests, (route, backend, row.intent or "none", status_class, fallback, api)).inc()
        if row.prompt_tokens:
            self._child(self.tokens, (route, backend, "prompt", api)).inc(row.prompt_tokens)
        if row.completion_tokens:
            self._child(self.tokens, (route, backend, "completion", api)).inc(row.completion_tokens)
        self._child(self.decisions, (row.reason or "none",)).inc()
        self._child(self.duration, (route,)).observe(row.latency_ms / 1000)
        if row.ttft_ms is not None:
            self._child(self.ttft, (route,)).observe(row.ttft_ms / 1000)
        if row.expected_ttft_ms is not None:
            self._child(self.expected_ttft, (route,)).observe(row.expected_ttft_ms / 1000)

    def _child(self, metric: Counter | Histogram, labels: tuple[str, ...]) -> Any:
        """``metric.labels(*labels)``, remembered: ``labels()`` takes a lock and builds a key
        on every call (~1 us), and a request looks up to five of them. The label values
        come from small fixed sets, so the memo stays small."""
        child = self._children.get((metric, labels))
        if child is None:
            child = self._children[metric, labels] = metric.labels(*labels)
        return child

    def shadow_run(self, arm: str, outcome: str) -> None:
        self.shadow_runs.labels(arm, outcome).inc()

    def fallback(self, from_backend: str, to_backend: str, reason: str) -> None:
        self.fallbacks.labels(from_backend, to_backend, reason).inc()

    def rejected(self, error: ProxyError) -> None:
        """Count a request the proxy refused with ``error`` (called where a raised
        ProxyError becomes the response: once per request, never on the happy path).

        A 499 (the client left while sending its body) was not refused, and a
        5xx is the proxy's or the backends' failure: neither is counted here.
        """
        reason: str | None
        if error.status == 429:
            reason = _REJECT_429.get(error.param or "", "rate_limited_requests")
        else:
            reason = _REJECT_BY_STATUS.get(error.status)
        if reason is not None:
            self._rejected[reason].inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _LiveState(Collector):
    """Gauges read from the pool and the accounting writer at scrape time."""

    def __init__(self, pool: Pool, recorder: UsageRecorder) -> None:
        self.pool = pool
        self.recorder = recorder

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterable[Metric]:
        backends = self.pool.backends.values()
        yield _gauge(
            "offload_backend_in_flight", "Requests in flight per backend.", backends, lambda b: b.in_flight
        )
        yield _gauge(
            "offload_backend_up", "1 when the backend can take traffic.", backends, lambda b: int(b.up)
        )
        yield _gauge(
            "offload_backend_breaker_state",
            "Worst endpoint breaker: 0 closed, 1 half-open, 2 open.",
            backends,
            lambda b: max(BREAKER_CODES[e.breaker.state] for e in b.endpoints),
        )
        shared_up = self.pool.slots.shared_up()  # None: nothing is shared (no state: key)
        if shared_up is not None:
            yield GaugeMetricFamily(
                "offload_shared_state_up",
                "1 while the replicas share slots, limits and response ids through Redis; "
                "0 while this one falls back to its share of each endpoint and per-process limits.",
                value=int(shared_up),
            )
        yield from admission_gauges(backends)
        spills = CounterMetricFamily(
            "offload_capacity_spills",
            "Requests sent elsewhere because the backend was full.",
            labels=["backend"],
        )
        for b in backends:
            spills.add_metric([b.name], b.spills)
        yield spills
        yield GaugeMetricFamily(
            "offload_accounting_queue_depth",
            "Usage rows waiting to be written.",
            value=self.recorder.queue_depth,
        )
        yield CounterMetricFamily(
            "offload_accounting_rows_spooled",
            "Usage rows written to the spool file.",
            value=self.recorder.rows_spooled,
        )
        yield CounterMetricFamily(
            "offload_accounting_rows_written", "Usage rows written to SQL.", value=self.recorder.rows_written
        )
        # Both alerted on (deploy/prometheus/alerts.yml). getattr: a test double may lack them.
        yield CounterMetricFamily(
            "offload_accounting_rows_lost",
            "Usage rows neither written nor spooled (disk full, malformed row): gone.",
            value=getattr(self.recorder, "rows_lost", 0),
        )
        yield CounterMetricFamily(
            "offload_accounting_rows_rejected",
            "Usage rows the database refused even once made storable, kept in <spool>.rejected.",
            value=getattr(self.recorder, "rows_rejected", 0),
        )


# Each endpoint's account in tokens (router/forward/admission.py), where its backend has max_ttft_s.
_ADMISSION_GAUGES = (
    ("prefill_tps", "offload_admission_prefill_tokens_per_second", "Learned prefill rate."),
    ("decode_tps", "offload_admission_decode_tokens_per_second", "Learned decode rate per sequence."),
    (
        "prefill_owed_tokens",
        "offload_admission_prefill_owed_tokens",
        "Uncached prompt tokens still to prefill.",
    ),
    ("kv_held_tokens", "offload_admission_kv_held_tokens", "KV tokens held by requests in flight."),
    ("kv_headroom_tokens", "offload_admission_kv_headroom_tokens", "KV capacity left for new requests."),
    (
        "expected_ttft_s",
        "offload_admission_expected_ttft_seconds",
        "Expected TTFT of a request arriving now.",
    ),
)


def admission_gauges(backends: Iterable[Backend]) -> Iterable[Metric]:
    """Per endpoint: learned rates, tokens in flight, KV headroom (none without max_ttft_s)."""
    states = [
        (b.name, redact_url(e.url), e.load.state(time.monotonic()))
        for b in backends
        if b.config.variant_of is None
        for e in b.endpoints
        if e.load is not None
    ]
    if not states:
        return
    for key, name, doc in _ADMISSION_GAUGES:
        family = GaugeMetricFamily(name, doc, labels=["backend", "endpoint"])
        for backend, url, state in states:
            value = state[key]
            if isinstance(value, int | float):
                family.add_metric([backend, url], float(value))
        yield family


def _gauge(
    name: str, doc: str, backends: Iterable[Backend], value: Callable[[Backend], float]
) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, doc, labels=["backend"])
    for b in backends:
        family.add_metric([b.name], value(b))
    return family
