"""A real Prometheus for tests, and the PromQL of the dashboard and the alerts.

``PrometheusServer`` starts the ``prometheus`` binary (Debian's ``prometheus``
package, or any on PATH) on a free loopback port with a generated config that
scrapes the given targets every second, waits until it is ready, answers
queries through the HTTP API and stops it again::

    with PrometheusServer({"offload-router": ["127.0.0.1:8080"]}) as prom:
        prom.wait_for('offload_requests_total')
        prom.query('sum(rate(offload_requests_total[1m]))')

``dashboard_exprs()`` and ``alert_exprs()`` pull every PromQL expression out of
``deploy/grafana/offload-router.json`` (Grafana variables substituted: see
:func:`substitute_grafana`) and ``deploy/prometheus/alerts.yml``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "deploy" / "grafana" / "offload-router.json"
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
PROMETHEUS_YML = ROOT / "deploy" / "prometheus" / "prometheus.yml"

# What Grafana puts in place of its built-in variables, for a query run by hand.
GRAFANA_DEFAULTS: dict[str, str] = {
    "__rate_interval": "1m",
    "__interval": "15s",
    "__interval_ms": "15000",
    "__range": "1h",
    "__range_s": "3600",
    "__range_ms": "3600000",
    "datasource": "prometheus",
}
# $name, ${name}, ${name:format}, [[name]]
_GRAFANA_VAR = re.compile(r"\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)\]\]")


class PromQLError(AssertionError):
    """The query API did not answer ``status: success`` for an expression."""

    def __init__(self, expr: str, payload: Any) -> None:
        self.expr = expr
        self.payload = payload
        if isinstance(payload, dict):
            detail = f"{payload.get('errorType')}: {payload.get('error')}"
        else:
            detail = repr(payload)[:300]
        super().__init__(f"{detail}\n  expr: {expr}")


def find_prometheus() -> str | None:
    """The prometheus binary: $PROMETHEUS_BIN, else the one on PATH, else None."""
    explicit = os.environ.get("PROMETHEUS_BIN")
    if explicit and os.access(explicit, os.X_OK):
        return explicit
    return shutil.which("prometheus")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrometheusServer:
    """A throw-away Prometheus process scraping ``targets`` every ``scrape_interval``.

    ``targets`` maps a job name to ``host:port`` addresses (``/metrics`` is
    scraped unless ``metrics_path`` says otherwise); a plain list means one job
    called ``test``. ``rule_files`` are copied next to the generated config and
    loaded, so their rules are evaluated too (see :meth:`rules`).
    ``job_options`` adds keys to a job's scrape config (e.g. the deployed
    ``metric_relabel_configs``: see :func:`deployed_job_options`).
    """

    def __init__(
        self,
        targets: Mapping[str, Iterable[str]] | Iterable[str],
        *,
        scrape_interval: str = "1s",
        metrics_path: str = "/metrics",
        rule_files: Iterable[str | Path] = (),
        job_options: Mapping[str, Mapping[str, Any]] | None = None,
        binary: str | None = None,
        workdir: str | Path | None = None,
        ready_timeout: float = 30.0,
    ) -> None:
        if not isinstance(targets, Mapping):
            targets = {"test": list(targets)}
        self.targets = {job: list(addrs) for job, addrs in targets.items()}
        self.scrape_interval = scrape_interval
        self.metrics_path = metrics_path
        self.rule_files = [Path(p) for p in rule_files]
        self.job_options = {job: dict(opts) for job, opts in (job_options or {}).items()}
        self.binary = binary or find_prometheus()
        if not self.binary:
            raise FileNotFoundError(
                "no prometheus binary (apt-get install prometheus, or set PROMETHEUS_BIN)"
            )
        self._own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="prom-harness-"))
        self.ready_timeout = ready_timeout
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._client: httpx.Client | None = None

    # ---------------------------------------------------------- lifecycle

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("prometheus is not started")
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / "prometheus.log"

    def config(self) -> dict[str, Any]:
        """The generated prometheus.yml, as a dict."""
        return {
            "global": {"scrape_interval": self.scrape_interval, "evaluation_interval": self.scrape_interval},
            "rule_files": [p.name for p in self.rule_files],
            "scrape_configs": [
                {
                    "job_name": job,
                    "metrics_path": self.metrics_path,
                    "scrape_timeout": self.scrape_interval,
                    "static_configs": [{"targets": addrs}],
                    **self.job_options.get(job, {}),
                }
                for job, addrs in self.targets.items()
            ],
        }

    def start(self) -> PrometheusServer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        for rule_file in self.rule_files:
            shutil.copy(rule_file, self.workdir / rule_file.name)
        config_file = self.workdir / "prometheus.yml"
        config_file.write_text(yaml.safe_dump(self.config(), sort_keys=False))
        last_error = ""
        for _ in range(3):  # a free port can be taken between free_port() and bind
            self.port = free_port()
            with open(self.log_path, "wb") as log:
                self.process = subprocess.Popen(
                    [
                        self.binary,
                        f"--config.file={config_file}",
                        f"--storage.tsdb.path={self.workdir / 'data'}",
                        f"--web.listen-address=127.0.0.1:{self.port}",
                        "--log.level=warn",
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=self.workdir,
                )
            try:
                self._wait_ready()
                return self
            except RuntimeError as exc:
                last_error = str(exc)
                self._kill()
                if "address already in use" not in last_error:
                    break
        raise RuntimeError(f"prometheus did not start: {last_error}")

    def _wait_ready(self) -> None:
        assert self.process is not None
        self._client = httpx.Client(base_url=self.url, timeout=5.0)
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"exited with {self.process.returncode}: {self.log_tail()}")
            try:
                if self._client.get("/-/ready").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"not ready after {self.ready_timeout}s: {self.log_tail()}")

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def _kill(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    def stop(self) -> None:
        self._kill()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> PrometheusServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------- queries

    def _get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        if self._client is None:
            raise RuntimeError("prometheus is not started")
        response = self._client.get(path, params=params)
        try:
            return response.json()
        except ValueError:
            return {"status": "error", "errorType": f"http {response.status_code}", "error": response.text}

    def query_raw(self, expr: str, at: float | None = None) -> dict[str, Any]:
        """The whole ``/api/v1/query`` answer; raises PromQLError unless status is success."""
        params: dict[str, Any] = {"query": expr}
        if at is not None:
            params["time"] = at
        payload = self._get("/api/v1/query", params)
        if not isinstance(payload, dict) or payload.get("status") != "success":
            raise PromQLError(expr, payload)
        return payload

    def query(self, expr: str, at: float | None = None) -> list[Any]:
        """``data.result`` of an instant query: a list of samples (or a scalar/string pair)."""
        data = self.query_raw(expr, at)["data"]
        result = data["result"]
        return result if data["resultType"] in ("vector", "matrix") else [result]

    def value(self, expr: str) -> float:
        """The single value of an expression that yields one sample (or a scalar)."""
        result = self.query(expr)
        if len(result) != 1:
            raise AssertionError(f"expected one sample, got {len(result)}: {expr}\n{result}")
        sample = result[0]
        return float(sample["value"][1] if isinstance(sample, dict) else sample[1])

    def wait_for(
        self,
        expr: str,
        predicate: Callable[[list[Any]], bool] = bool,
        timeout: float = 30.0,
        interval: float = 0.25,
    ) -> list[Any]:
        """Poll ``expr`` until ``predicate(result)`` holds (default: non-empty); return the result."""
        deadline = time.monotonic() + timeout
        result: list[Any] = []
        while True:
            result = self.query(expr)
            if predicate(result):
                return result
            if time.monotonic() >= deadline:
                raise TimeoutError(f"after {timeout}s, {expr} gave {result!r}")
            time.sleep(interval)

    def wait_for_targets(self, timeout: float = 30.0) -> None:
        """Every configured target has been scraped successfully at least once."""
        expected = sum(len(addrs) for addrs in self.targets.values())
        self.wait_for("up == 1", lambda r: len(r) >= expected, timeout=timeout)

    def targets_health(self) -> list[dict[str, Any]]:
        return self._get("/api/v1/targets")["data"]["activeTargets"]

    def rules(self) -> list[dict[str, Any]]:
        """Every loaded rule with its ``health`` (ok/err/unknown) and ``lastError``."""
        groups = self._get("/api/v1/rules")["data"]["groups"]
        return [rule for group in groups for rule in group["rules"]]

    def wait_for_rules(self, timeout: float = 30.0, interval: float = 0.25) -> list[dict[str, Any]]:
        """The loaded rules, once every one has been evaluated (health no longer ``unknown``)."""
        deadline = time.monotonic() + timeout
        while True:
            rules = self.rules()
            if rules and all(r["health"] != "unknown" for r in rules):
                return rules
            if time.monotonic() >= deadline:
                raise TimeoutError(f"after {timeout}s, rules not all evaluated: {rules!r}")
            time.sleep(interval)


def deployed_job_options(
    path: str | Path = PROMETHEUS_YML, keys: Iterable[str] = ("metric_relabel_configs",)
) -> dict[str, dict[str, Any]]:
    """Per job, the given keys of the deployed scrape configs (relabelling, by default)."""
    doc = yaml.safe_load(Path(path).read_text())
    wanted = tuple(keys)
    return {
        job["job_name"]: {k: job[k] for k in wanted if k in job}
        for job in doc.get("scrape_configs") or []
        if any(k in job for k in wanted)
    }


# ---------------------------------------------------------- expressions


@dataclass(frozen=True)
class Expr:
    source: str  # "dashboard: <panel title> [refId]" or "alert: <name>"
    expr: str  # ready to send to Prometheus


def substitute_grafana(expr: str, variables: Mapping[str, str] | None = None) -> str:
    """Replace Grafana variables with values Prometheus accepts.

    Built-ins (``$__rate_interval`` → ``1m``, ``$__interval`` → ``15s``, ...)
    come from GRAFANA_DEFAULTS; ``variables`` adds or overrides; any other
    dashboard variable becomes ``.*`` (it is only ever used in a ``=~`` matcher).
    """
    values = {**GRAFANA_DEFAULTS, **(variables or {})}

    def repl(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2) or m.group(3)
        return values.get(name, ".*")

    return _GRAFANA_VAR.sub(repl, expr)


def _walk_panels(panels: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _walk_panels(panel.get("panels") or [])


def dashboard_exprs(path: str | Path = DASHBOARD, variables: Mapping[str, str] | None = None) -> list[Expr]:
    """Every target ``expr`` of every panel (rows' nested panels included), substituted."""
    dashboard = json.loads(Path(path).read_text())
    out: list[Expr] = []
    for panel in _walk_panels(dashboard.get("panels") or []):
        for target in panel.get("targets") or []:
            if target.get("expr"):
                source = f"dashboard: {panel.get('title', panel.get('id'))} [{target.get('refId', '?')}]"
                out.append(Expr(source, substitute_grafana(target["expr"], variables)))
    return out


def alert_exprs(path: str | Path = ALERTS) -> list[Expr]:
    """Every rule's ``expr`` (alerting and recording rules) in a Prometheus rule file."""
    doc = yaml.safe_load(Path(path).read_text())
    out: list[Expr] = []
    for group in doc.get("groups") or []:
        for rule in group.get("rules") or []:
            name = rule.get("alert") or rule.get("record")
            out.append(Expr(f"alert: {name}", str(rule["expr"]).strip()))
    return out
