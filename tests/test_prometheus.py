"""The dashboard and the alert rules against a real Prometheus.

A real ``prometheus`` scrapes a stand-in exporter (the proxy's metric names,
known traffic) and a stand-in vLLM every second. Every dashboard and alert
expression must be accepted by the query API, every dashboard panel must
return data, and the route-ratio panel must say 0.75 for 3 local requests per
1 cloud request.

The traffic comes from the ``scrape_targets`` fixture. To test the real proxy
instead, override that fixture: start the proxy (and a simulated vLLM), send
traffic in the same 3-local : 1-cloud proportion *continuously* (``rate()``
needs counters that increase across scrapes, not a one-off burst before the
first scrape) and yield a ``ScrapeTargets`` with the proxy's address.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

from tests.prometheus_harness import (
    ALERTS,
    PrometheusServer,
    alert_exprs,
    dashboard_exprs,
    deployed_job_options,
    find_prometheus,
)

pytestmark = pytest.mark.prometheus

if find_prometheus() is None:
    pytest.skip(
        "no prometheus binary on PATH (apt-get install prometheus, or set PROMETHEUS_BIN)",
        allow_module_level=True,
    )

ROUTE_RATIO = (
    'sum(rate(offload_requests_total{route="local"}[$__rate_interval])) '
    "/ sum(rate(offload_requests_total[$__rate_interval]))"
)


@dataclass
class ScrapeTargets:
    """What Prometheus scrapes, and what the traffic behind it should show."""

    jobs: dict[str, list[str]]
    expected_local_share: float  # of requests
    expected_local_token_share: float
    stop: list = field(default_factory=list)


# --------------------------------------------------------- stand-in exporter


class StandInProxy:
    """The proxy's metrics for steady traffic: each scrape is one more "tick".

    Per tick: 3 requests served locally (intents coding, tools, instruction)
    and 1 coding request that spilled (local full) and was served by the cloud
    as a fallback. Every value is derived from one tick count per scrape, so
    counters move together and ratios of rates are exact.
    """

    LOCAL_PER_TICK = 3
    CLOUD_PER_TICK = 1
    TOKENS = {
        ("local", "prompt"): 300,
        ("local", "completion"): 60,
        ("cloud", "prompt"): 100,
        ("cloud", "completion"): 20,
    }
    BUCKETS = ("0.05", "0.1", "0.5", "1.0", "5.0", "+Inf")

    def __init__(self) -> None:
        self._ticks = itertools.count(1)
        self._lock = threading.Lock()

    def describe(self) -> list:
        return []  # collect() is only called on scrapes

    def collect(self) -> Iterator[object]:
        with self._lock:
            n = next(self._ticks)
        requests = CounterMetricFamily(
            "offload_requests", "Requests", labels=["route", "backend", "intent", "status_class", "fallback"]
        )
        for intent in ("coding", "tools", "instruction"):
            requests.add_metric(["local", "local", intent, "2xx", "0"], n * self.LOCAL_PER_TICK / 3)
        requests.add_metric(["cloud", "cloud", "coding", "2xx", "1"], n * self.CLOUD_PER_TICK)
        yield requests
        tokens = CounterMetricFamily("offload_tokens", "Tokens", labels=["route", "backend", "direction"])
        for (route, direction), per_tick in self.TOKENS.items():
            tokens.add_metric([route, route, direction], n * per_tick)
        yield tokens
        yield self._histogram(
            "offload_request_duration_seconds", n, {"local": (0, 1, 2, 3, 3, 3), "cloud": (0, 0, 0, 0, 1, 1)}
        )
        yield self._histogram(
            "offload_time_to_first_token_seconds",
            n,
            {"local": (1, 2, 3, 3, 3, 3), "cloud": (0, 0, 1, 1, 1, 1)},
        )
        decision = HistogramMetricFamily("offload_decision_seconds", "Decision time")
        decision.add_metric([], [(b, n * 4) for b in self.BUCKETS], sum_value=n * 4 * 0.001)
        yield decision
        for name, values in (
            ("offload_backend_in_flight", {"local": 7, "cloud": 1}),
            ("offload_backend_up", {"local": 1, "cloud": 1}),
            ("offload_backend_breaker_state", {"local": 0, "cloud": 0}),
        ):
            gauge = GaugeMetricFamily(name, name, labels=["backend"])
            for backend, value in values.items():
                gauge.add_metric([backend], value)
            yield gauge
        spills = CounterMetricFamily("offload_capacity_spills", "Spills", labels=["backend"])
        spills.add_metric(["local"], n)
        yield spills
        fallbacks = CounterMetricFamily(
            "offload_fallbacks", "Fallbacks", labels=["from_backend", "to_backend", "reason"]
        )
        fallbacks.add_metric(["local", "cloud", "capacity"], n)
        yield fallbacks
        yield GaugeMetricFamily("offload_accounting_queue_depth", "Queue", value=5)
        yield CounterMetricFamily("offload_accounting_rows_written", "Written", value=n * 4)
        yield CounterMetricFamily("offload_accounting_rows_spooled", "Spooled", value=0)

    def _histogram(self, name: str, n: int, per_route: dict[str, tuple[int, ...]]) -> HistogramMetricFamily:
        family = HistogramMetricFamily(name, name, labels=["route"])
        for route, cumulative in per_route.items():
            family.add_metric(
                [route],
                [(b, n * c) for b, c in zip(self.BUCKETS, cumulative, strict=True)],
                sum_value=n * 0.5,
            )
        return family


class StandInVllm:
    """vLLM's load gauges, as its /metrics shows them (names with colons)."""

    def describe(self) -> list:
        return []

    def collect(self) -> Iterator[object]:
        for name, value in (
            ("vllm:num_requests_running", 7),
            ("vllm:num_requests_waiting", 0),
            ("vllm:kv_cache_usage_perc", 0.4),
        ):
            gauge = GaugeMetricFamily(name, name, labels=["model_name", "engine"])
            gauge.add_metric(["poolside/Laguna-S-2.1-NVFP4", "0"], value)
            yield gauge


def _serve(collector: object) -> tuple[str, object]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)  # type: ignore[arg-type]
    server, _thread = start_http_server(0, addr="127.0.0.1", registry=registry)
    return f"127.0.0.1:{server.server_port}", server


@pytest.fixture(scope="module")
def scrape_targets() -> Iterator[ScrapeTargets]:
    """The stand-in proxy and vLLM exporters. Override to scrape the real proxy."""
    proxy_addr, proxy_server = _serve(StandInProxy())
    vllm_addr, vllm_server = _serve(StandInVllm())
    try:
        yield ScrapeTargets(
            jobs={"offload-router": [proxy_addr], "vllm": [vllm_addr]},
            expected_local_share=0.75,
            expected_local_token_share=(300 + 60) / (300 + 60 + 100 + 20),
        )
    finally:
        for server in (proxy_server, vllm_server):
            server.shutdown()  # type: ignore[attr-defined]
            server.server_close()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def prom(scrape_targets: ScrapeTargets) -> Iterator[PrometheusServer]:
    with PrometheusServer(
        scrape_targets.jobs,
        scrape_interval="1s",
        rule_files=[ALERTS],
        # The deployed relabelling (vLLM's metric names), so the test sees what production stores.
        job_options=deployed_job_options(),
    ) as server:
        server.wait_for_targets(timeout=30)
        # rate() over [1m] needs two samples of every counter.
        server.wait_for("sum(rate(offload_requests_total[1m])) > 0", timeout=30)
        yield server


# ------------------------------------------------------------------ tests

DASHBOARD_EXPRS = dashboard_exprs()
ALERT_EXPRS = alert_exprs()


def test_harness_found_expressions() -> None:
    assert len(DASHBOARD_EXPRS) >= 15
    assert {e.source for e in ALERT_EXPRS} >= {
        "alert: OffloadLocalBoxDown",
        "alert: OffloadFallbackRateHigh",
        "alert: OffloadAccountingSpooling",
    }
    for e in DASHBOARD_EXPRS:
        assert "$" not in e.expr and "[[" not in e.expr, e


@pytest.mark.parametrize("item", DASHBOARD_EXPRS + ALERT_EXPRS, ids=lambda e: e.source)
def test_expression_is_valid_promql(prom: PrometheusServer, item) -> None:
    prom.query_raw(item.expr)  # raises PromQLError unless status is success


@pytest.mark.parametrize("item", DASHBOARD_EXPRS, ids=lambda e: e.source)
def test_dashboard_panel_returns_data(prom: PrometheusServer, item) -> None:
    result = prom.wait_for(item.expr, timeout=20)
    values = [float(s["value"][1]) for s in result]
    assert not all(math.isnan(v) for v in values), f"{item.source}: only NaN: {result}"


def test_route_ratio_panel(prom: PrometheusServer, scrape_targets: ScrapeTargets) -> None:
    (ratio,) = [e for e in DASHBOARD_EXPRS if e.source.startswith("dashboard: Local share of requests")]
    assert ratio.expr == ROUTE_RATIO.replace("$__rate_interval", "1m")
    assert prom.value(ratio.expr) == pytest.approx(scrape_targets.expected_local_share, abs=1e-6)


def test_token_ratio_panel(prom: PrometheusServer, scrape_targets: ScrapeTargets) -> None:
    (all_tokens, _completion) = [
        e for e in DASHBOARD_EXPRS if e.source.startswith("dashboard: Local share of tokens")
    ]
    assert prom.value(all_tokens.expr) == pytest.approx(scrape_targets.expected_local_token_share, abs=1e-6)


def test_alert_rules_load_and_evaluate(prom: PrometheusServer) -> None:
    """alerts.yml loaded as a rule file: every rule is there and evaluates without error."""
    names = {e.source.removeprefix("alert: ") for e in ALERT_EXPRS}
    rules = {r["name"]: r for r in prom.wait_for_rules(timeout=20)}
    assert set(rules) == names
    bad = {n: r.get("lastError") for n, r in rules.items() if r["health"] != "ok"}
    assert not bad, bad


def test_alerts_on_the_stand_in_traffic(prom: PrometheusServer) -> None:
    """The box is up, nothing is spooled: only the fallback-rate condition holds (25% > 20%)."""
    by_name = {e.source.removeprefix("alert: "): e.expr for e in ALERT_EXPRS}
    assert prom.query(by_name["OffloadLocalBoxDown"]) == []
    assert prom.query(by_name["OffloadAccountingSpooling"]) == []
    assert prom.query(by_name["OffloadRouterDown"]) == []
    (sample,) = prom.query(by_name["OffloadFallbackRateHigh"])
    assert float(sample["value"][1]) == pytest.approx(0.25, abs=1e-6)


def test_vllm_names_keep_their_colons(prom: PrometheusServer) -> None:
    """prometheus_client's OpenMetrics output turns ``vllm:x`` into ``vllm_x`` in samples
    (prometheus/client_python#1177); the deployed metric_relabel_configs undo it."""
    names = {s["metric"]["__name__"] for s in prom.query('{job="vllm", __name__=~"vllm.+"}')}
    assert names == {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"}
