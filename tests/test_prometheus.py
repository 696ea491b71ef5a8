"""The dashboard and the alert rules against a real Prometheus scraping the real proxy.

A real ``prometheus`` scrapes, every second, the real proxy (``ProxyServer``
with its real SQLite usage writer) and the simulated local vLLM's ``/metrics``
while traffic flows through the proxy to the fake upstreams. Every dashboard
and alert expression must be accepted by the query API, every dashboard panel
must return data, and the share panels must give exactly the known shares.

The traffic comes in phases, because ``rate()`` over a window sees every
request in it:

A. *warm-up*: the 3-local : 1-cloud mix, plus what only some panels need: a
   tool-loop turn (a second intent), fallbacks after local 503s, spills while
   the local vLLM reports a waiting queue, and one of each unanswered request
   (see ``unanswered``: no backend served it, an upstream error, a client that
   gave up, two the proxy refused itself);
   then a pause of a few scrapes, so that Prometheus stores A's final counts;
B. *ratio*: units of 3 local + 1 cloud requests and one more set of unanswered
   requests, then another pause. Every sample taken in a pause sits on a unit
   boundary, so the counters moved by exactly 3U local and U cloud answers
   (plus the known unanswered ones) between the first and the last sample of
   a window that starts in the first pause and ends in the second. The share
   panels must still say 3:1: they count answered requests, as the report does;
C. *live*: the same mix in a background thread until the module is done, so
   that every ``[1m]`` panel has fresh increases whenever it is queried.

Why the share is exact and not just close: ``sum(rate(a)) / sum(rate(b))``
extrapolates every series by the same factor when all series have samples at
the same instants (one target) and none of them started near the window's
start (rate's "extrapolate to zero" cap). Phase A creates every series B
moves, with enough counts that the cap never applies.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from router.edge.metrics import REJECT_REASONS
from router.fake.upstream import RunningFake, start_in_thread
from router.ledger.writer import UsageRecorder
from router.ops.demo import simulated_backends
from tests.conftest import CLOUD_KEY, fake_config
from tests.harness import ProxyServer, make_config, wait_until
from tests.prometheus_harness import (
    ALERTS,
    PrometheusServer,
    alert_exprs,
    dashboard_exprs,
    deployed_job_options,
    find_prometheus,
    substitute_grafana,
)
from tests.test_metrics import scrape, series, usage_of

pytestmark = pytest.mark.prometheus

if find_prometheus() is None:
    pytest.skip(
        "no prometheus binary on PATH (apt-get install prometheus, or set PROMETHEUS_BIN)",
        allow_module_level=True,
    )

# Answered requests only (served by a backend, 2xx), as the monthly report counts them.
ROUTE_RATIO = (
    'sum(rate(offload_requests_total{route="local", status_class="2xx"}[$__rate_interval])) '
    '/ sum(rate(offload_requests_total{route!="none", status_class="2xx"}[$__rate_interval]))'
)
# What the panel said before: every request, also those no backend served or answered.
ALL_REQUESTS_RATIO = (
    'sum(rate(offload_requests_total{route="local"}[$__rate_interval])) '
    "/ sum(rate(offload_requests_total[$__rate_interval]))"
)
CLIENT_KEY = "sk-offload-prom-abcdef0123456789"
CHAT = "/v1/chat/completions"
SCRAPE_S = 1.0
PAUSE_S = 2.5  # > 2 scrape intervals: at least two samples are taken in every pause
RATIO_PHASE_S = 6.0
UNIT_GAP_S = 0.1  # between units: a steady, modest rate on two shared cores

LOCAL_BODY = {
    "model": "local",
    "messages": [{"role": "user", "content": "Fix the failing test in parser.py"}],
}
TOKENS_BODY = {**LOCAL_BODY, "model": "tokens"}
CLOUD_BODY = {
    "model": "cloud",
    "messages": [{"role": "user", "content": "Prove the integral of exp(-x^2) over R is sqrt(pi)."}],
}
TOOLS = [{"type": "function", "function": {"name": "run_shell", "parameters": {"type": "object"}}}]


# ------------------------------------------------------------------ traffic


class Traffic:
    """Sends requests through the proxy; returns the usage each answer reported."""

    def __init__(self, base_url: str) -> None:
        self.client = httpx.Client(
            base_url=base_url, timeout=30, headers={"Authorization": f"Bearer {CLIENT_KEY}"}
        )

    def close(self) -> None:
        self.client.close()

    def send(self, body: dict[str, Any], stream: bool = False) -> httpx.Response:
        if stream:
            body = {**body, "stream": True, "stream_options": {"include_usage": True}}
        response = self.client.post(CHAT, json=body)
        assert response.status_code == 200, response.text
        return response

    def unit(self) -> Counter[tuple[str, str]]:
        """3 local requests and 1 cloud request (streams for both routes, for the TTFT panel).

        Returns the tokens the upstreams reported, by (served route, direction).
        """
        answers = [
            self.send(LOCAL_BODY),
            self.send(LOCAL_BODY),
            self.send(LOCAL_BODY, stream=True),
            self.send(CLOUD_BODY, stream=True),
        ]
        tokens: Counter[tuple[str, str]] = Counter()
        for answer in answers:
            usage = usage_of(answer)
            route = answer.headers["x-offload-route"]
            tokens[(route, "prompt")] += usage["prompt_tokens"]
            tokens[(route, "completion")] += usage["completion_tokens"]
        return tokens

    def tool_turn(self) -> None:
        """A tool-loop turn: the policy keeps it local with intent ``tools``."""
        call = {
            "id": "chatcmpl-tool-1",
            "type": "function",
            "function": {"name": "run_shell", "arguments": "{}"},
        }
        messages = [
            {"role": "user", "content": "run the tests"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "chatcmpl-tool-1", "content": "1 failed"},
        ]
        self.send({"model": "auto", "messages": messages, "tools": TOOLS})


def unanswered(traffic: Traffic, proxy: ProxyServer, local: RunningFake, cloud: RunningFake) -> None:
    """One of each request that is not an answered one (the report leaves them all out of its shares):

    - no backend served it: the cloud answers 503 and has no fallback (route "none", 5xx);
    - a backend served an error: the local box answers 400, which never falls back (route "local", 4xx);
    - the client gave up while the box was thinking (route "none", 499, prompt tokens estimated);
    - refused by the proxy itself: no key (401), not JSON (400); these are only in
      offload_rejected_requests_total.
    """
    fake_config(cloud, fail_status=503, fail_count=1)
    response = traffic.client.post(CHAT, json=CLOUD_BODY)
    assert (response.status_code, response.headers["x-offload-route"]) == (503, "none")

    fake_config(local, fail_status=400, fail_count=1)
    response = traffic.client.post(CHAT, json=LOCAL_BODY)
    assert (response.status_code, response.headers["x-offload-route"]) == (400, "local")

    def gave_up() -> float:
        keys = ("route", "status_class")
        return series(scrape(proxy), "offload_requests_total", keys).get(("none", "4xx"), 0)

    before = gave_up()
    fake_config(local, first_byte_delay=3)
    with pytest.raises(httpx.ReadTimeout):
        traffic.client.post(CHAT, json=LOCAL_BODY, timeout=0.3)
    fake_config(local, first_byte_delay=0)
    assert wait_until(lambda: gave_up() == before + 1, timeout=5)  # counted before the next pause

    assert httpx.post(proxy.url + CHAT, json=LOCAL_BODY, timeout=10).status_code == 401
    assert traffic.client.post(CHAT, content=b'{"model": "local",').status_code == 400


def local_endpoint(proxy: ProxyServer) -> dict[str, Any]:
    return proxy.get("/readyz").json()["backends"]["local"]["endpoints"][0]


def warm_up(traffic: Traffic, proxy: ProxyServer, local: RunningFake, cloud: RunningFake) -> None:
    """Phase A: the mix, a second intent, fallbacks after 503s, spills while vLLM queues,
    and the unanswered requests (their series must exist before phase B, or rate() would
    not see phase B's increments of them)."""
    for _ in range(8):
        traffic.unit()
    traffic.tool_turn()
    unanswered(traffic, proxy, local, cloud)
    for _ in range(2):  # the token account's rates, owed prefill and expected TTFT
        for _ in range(3):
            assert traffic.send(TOKENS_BODY, stream=True).headers["x-offload-route"] == "tokens"
        time.sleep(SCRAPE_S * 1.5)

    # One fallback, a scrape, another: rate() never sees a series' first value as an
    # increase (the series did not exist before), so a single burst would show no rate.
    for _ in range(2):
        fake_config(local, fail_status=503, fail_count=1)
        assert traffic.send(LOCAL_BODY).headers["x-offload-fallback"] == "1"
        # A success in between clears the breaker's count of failed requests.
        assert traffic.send(LOCAL_BODY).headers["x-offload-fallback"] == "0"
        time.sleep(SCRAPE_S * 1.5)
    assert local_endpoint(proxy)["breaker"] == "closed"  # one failure at a time: never opened

    fake_config(local, waiting=1)  # vLLM says requests are queueing: the proxy spills
    assert wait_until(lambda: local_endpoint(proxy)["waiting"] == 1, timeout=5)
    for _ in range(2):
        assert traffic.send(LOCAL_BODY).headers["x-offload-fallback"] == "1"
    fake_config(local, waiting=0)
    assert wait_until(lambda: local_endpoint(proxy)["waiting"] == 0, timeout=5)

    # Enough of the plain mix that phase B's series are far from zero (see the docstring).
    for _ in range(8):
        traffic.unit()


def keep_sending(base_url: str, stop: threading.Event) -> None:
    """Phase C: the 3:1 mix until told to stop."""
    traffic = Traffic(base_url)
    try:
        while not stop.is_set():
            # E.g. during the box-down test: keep the traffic going, the queries decide.
            with contextlib.suppress(httpx.HTTPError, AssertionError):
                traffic.unit()
            stop.wait(UNIT_GAP_S * 2)
    finally:
        traffic.close()


# ------------------------------------------------------------------ fixtures


@dataclass
class LiveRun:
    prom: PrometheusServer
    proxy: ProxyServer
    local: RunningFake
    ratio_at: float  # evaluate phase-B expressions at this instant (in the second pause)
    ratio_window: str  # from the first pause to ratio_at: phase B and nothing else
    ratio_start: float  # an instant in the first pause, after every phase-A sample
    units: int  # 3:1 units sent in phase B
    tokens: Counter[tuple[str, str]]  # reported by the upstreams in phase B


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveRun]:
    workdir: Path = tmp_path_factory.mktemp("prom-live")
    local = start_in_thread("vllm", model="poolside/Laguna-S-2.1-NVFP4")
    cloud = start_in_thread("cloud", api_key=CLOUD_KEY, model="gpt-5.1")
    backends = simulated_backends(local.url, cloud.url, CLOUD_KEY)
    # A second backend on the same box with admission in tokens (generous enough never to
    # spill), for the admission panels; `local` keeps today's admission for the phases below.
    backends["tokens"] = {**backends["local"], "max_ttft_s": 600}
    config = make_config(
        local.url,
        cloud.url,
        backends=backends,
        # The real writer, so the accounting panels and alerts see real numbers.
        database={
            "url": f"sqlite:///{workdir / 'usage.db'}",
            "spool_path": str(workdir / "spool.jsonl"),
            "flush_interval_s": 0.2,
        },
        routing__capacity={"metrics_interval_s": 0.2},  # notice vLLM's queue quickly
        auth={"keys": [{"name": "agents", "key": CLIENT_KEY}]},  # so that a request can be refused
    )
    proxy = ProxyServer(config, recorder=UsageRecorder(config.database))
    prom = PrometheusServer(
        {"offload-router": [f"127.0.0.1:{proxy.port}"], "vllm": [f"127.0.0.1:{local.port}"]},
        scrape_interval=f"{SCRAPE_S:g}s",
        rule_files=[ALERTS],
        # The deployed relabelling (vLLM's metric names), so the test sees what production stores.
        job_options=deployed_job_options(),
    )
    stop = threading.Event()
    background = threading.Thread(target=keep_sending, args=(proxy.url, stop), daemon=True)
    traffic = Traffic(proxy.url)
    try:
        prom.start()
        prom.wait_for_targets(timeout=30)

        warm_up(traffic, proxy, local, cloud)
        first_pause = time.time()
        time.sleep(PAUSE_S)

        tokens: Counter[tuple[str, str]] = Counter()
        units = 0
        ratio_start = time.time()
        while time.time() < ratio_start + RATIO_PHASE_S:
            tokens += traffic.unit()
            units += 1
            if units == 2:
                unanswered(traffic, proxy, local, cloud)
            time.sleep(UNIT_GAP_S)
        ratio_end = time.time()
        time.sleep(PAUSE_S)
        ratio_at = ratio_end + PAUSE_S - 0.2
        # Start half a second into the first pause: no sample taken during phase A is inside.
        window_ms = int((ratio_at - (first_pause + 0.5)) * 1000)

        background.start()
        prom.wait_for("sum(rate(offload_requests_total[1m])) > 0", timeout=30)
        yield LiveRun(prom, proxy, local, ratio_at, f"{window_ms}ms", ratio_start - 0.05, units, tokens)
    finally:
        stop.set()
        if background.is_alive():
            background.join(30)
        traffic.close()
        prom.stop()
        proxy.stop()
        local.stop()
        cloud.stop()


@pytest.fixture(scope="module")
def prom(live: LiveRun) -> PrometheusServer:
    return live.prom


def value_at(prom: PrometheusServer, expr: str, at: float) -> float:
    (sample,) = prom.query(expr, at=at)
    return float(sample["value"][1])


# ------------------------------------------------------------------ tests

DASHBOARD_EXPRS = dashboard_exprs()
ALERT_EXPRS = alert_exprs()
ALERTS_BY_NAME = {e.source.removeprefix("alert: "): e.expr for e in ALERT_EXPRS}


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
    assert not all(v != v for v in values), f"{item.source}: only NaN: {result}"


def test_ratio_phase_was_clean(live: LiveRun) -> None:
    """Between the pauses the counters moved by exactly the units sent and one set of
    unanswered requests: nothing else, no fallbacks."""
    prom, at, start = live.prom, live.ratio_at, live.ratio_start

    def moved(expr: str) -> float:
        return value_at(prom, expr, at) - value_at(prom, expr, start)

    for route, per_unit in (("local", 3), ("cloud", 1)):
        assert moved(f'sum(offload_requests_total{{route="{route}", status_class="2xx"}})') == (
            per_unit * live.units
        ), route
    assert moved('sum(offload_requests_total{route="local", status_class="4xx"})') == 1  # the 400
    assert moved('sum(offload_requests_total{route="cloud", status_class!="2xx"}) or vector(0)') == 0
    assert moved('sum(offload_requests_total{route="none", status_class="5xx"})') == 1  # the 503
    assert moved('sum(offload_requests_total{route="none", status_class="4xx"})') == 1  # gave up
    assert moved("sum(offload_fallbacks_total)") == 0
    for reason in REJECT_REASONS:
        expected = 1 if reason in ("unauthorized", "invalid_request") else 0
        assert moved(f'sum(offload_rejected_requests_total{{reason="{reason}"}})') == expected, reason
    assert live.units >= 10


def test_route_ratio_panel(live: LiveRun) -> None:
    (ratio,) = [e for e in DASHBOARD_EXPRS if e.source.startswith("dashboard: Local share of requests")]
    assert ratio.expr == ROUTE_RATIO.replace("$__rate_interval", "1m")
    # The panel's own expression, with a window holding phase B only.
    expr = substitute_grafana(ROUTE_RATIO, {"__rate_interval": live.ratio_window})
    assert value_at(live.prom, expr, live.ratio_at) == pytest.approx(0.75, abs=1e-9)
    # Over every request, as the panel used to count, the same window says less: phase B's
    # unanswered requests are in it (1 local 400; 2 with route "none"; refusals are not requests).
    every = substitute_grafana(ALL_REQUESTS_RATIO, {"__rate_interval": live.ratio_window})
    u = live.units
    expected = (3 * u + 1) / (4 * u + 3)
    assert value_at(live.prom, every, live.ratio_at) == pytest.approx(expected, abs=1e-9)


def test_token_ratio_panels(live: LiveRun) -> None:
    """Local share of all tokens and of completion tokens = what the upstreams reported in phase B."""
    exprs = [e for e in dashboard_exprs(variables={"__rate_interval": live.ratio_window})]
    all_tokens, completion = [
        e.expr for e in exprs if e.source.startswith("dashboard: Local share of tokens")
    ]
    t = live.tokens
    local_all = t[("local", "prompt")] + t[("local", "completion")]
    expected_all = local_all / sum(t.values())
    expected_completion = t[("local", "completion")] / (
        t[("local", "completion")] + t[("cloud", "completion")]
    )
    assert value_at(live.prom, all_tokens, live.ratio_at) == pytest.approx(expected_all, abs=1e-9)
    assert value_at(live.prom, completion, live.ratio_at) == pytest.approx(expected_completion, abs=1e-9)
    # The client that gave up left estimated prompt tokens on route "none": over all tokens,
    # as the panel used to count, the share would come out lower.
    window = live.ratio_window
    every = f'sum(rate(offload_tokens_total{{route="local"}}[{window}])) / sum(rate(offload_tokens_total[{window}]))'
    assert value_at(live.prom, every, live.ratio_at) < expected_all - 1e-6


def test_rejected_requests_panel(live: LiveRun) -> None:
    """Every reason is a series from the start; phase B's refusals show under theirs."""
    exprs = dashboard_exprs(variables={"__rate_interval": live.ratio_window})
    (panel,) = [e for e in exprs if e.source.startswith("dashboard: Rejected requests by reason")]
    result = live.prom.query(panel.expr, at=live.ratio_at)
    rates = {s["metric"]["reason"]: float(s["value"][1]) for s in result}
    assert set(rates) == set(REJECT_REASONS)
    assert {reason for reason, rate in rates.items() if rate > 0} == {"unauthorized", "invalid_request"}


def test_alert_rules_load_and_evaluate(prom: PrometheusServer) -> None:
    """alerts.yml loaded as a rule file: every rule is there and evaluates without error."""
    rules = {r["name"]: r for r in prom.wait_for_rules(timeout=20)}
    assert set(rules) == set(ALERTS_BY_NAME)
    bad = {n: r.get("lastError") for n, r in rules.items() if r["health"] != "ok"}
    assert not bad, bad


def test_alerts_quiet_on_healthy_traffic(prom: PrometheusServer) -> None:
    """The box is up, rows reach SQL, vLLM's queue is empty again: no alert condition holds.

    The few warm-up fallbacks are a small share of the traffic, below the 20% threshold.
    """
    for name in (
        "OffloadLocalBoxDown",
        "OffloadAccountingSpooling",
        "OffloadAccountingBacklog",
        "OffloadRouterDown",
        "OffloadBreakerOpen",
        "VllmQueueing",
        "OffloadFallbackRateHigh",
    ):
        assert prom.query(ALERTS_BY_NAME[name]) == [], name
    share = prom.value(
        "sum(rate(offload_fallbacks_total[5m])) / clamp_min(sum(rate(offload_requests_total[5m])), 1e-9)"
    )
    assert 0 < share < 0.2
    assert prom.value("sum(offload_accounting_rows_written_total)") > 0


def test_vllm_names_keep_their_colons(prom: PrometheusServer) -> None:
    """prometheus_client's OpenMetrics output turns ``vllm:x`` into ``vllm_x`` in samples
    (prometheus/client_python#1177); the deployed metric_relabel_configs undo it."""
    names = {s["metric"]["__name__"] for s in prom.query('{job="vllm", __name__=~"vllm.+"}')}
    read_by_the_proxy = {
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:kv_cache_usage_perc",
        "vllm:prefix_cache_queries_total",
        "vllm:prefix_cache_hits_total",
        "vllm:cache_config_info",
    }
    assert read_by_the_proxy <= names
    assert [n for n in names if not n.startswith("vllm:")] == []  # none turned into vllm_x


def test_local_box_down_alert_condition(live: LiveRun) -> None:
    """The page-worthy condition holds once the box fails its health checks (runs last: it
    takes the box down, then brings it back)."""
    fake_config(live.local, health_status=503)
    try:
        (sample,) = live.prom.wait_for(ALERTS_BY_NAME["OffloadLocalBoxDown"], timeout=15)
        assert float(sample["value"][1]) == 0
        # Meanwhile the local traffic falls back because the box is down.
        live.prom.wait_for(
            'sum(offload_fallbacks_total{from_backend="local", reason="backend_down"}) > 0', timeout=15
        )
    finally:
        fake_config(live.local, health_status=200)
    live.prom.wait_for('max(offload_backend_up{backend="local"}) == 1', timeout=15)
