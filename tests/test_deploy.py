"""deploy/: the files parse, reference only files that exist, and pass the tools' own checks."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from router.config import parse_config

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose" / "docker-compose.yml"
K8S = DEPLOY / "k8s"
DASHBOARD = DEPLOY / "grafana" / "offload-router.json"
PROM = DEPLOY / "prometheus"
UNITS = sorted((DEPLOY / "systemd").glob("*.service"))

# The proxy's metric names (router/edge/metrics.py); vLLM's come from its own /metrics.
PROXY_METRICS = {
    "offload_requests_total",
    "offload_accounting_rows_lost_total",
    "offload_accounting_rows_rejected_total",
    "offload_tokens_total",
    "offload_request_duration_seconds_bucket",
    "offload_time_to_first_token_seconds_bucket",
    "offload_backend_in_flight",
    "offload_backend_up",
    "offload_backend_breaker_state",
    "offload_capacity_spills_total",
    "offload_fallbacks_total",
    "offload_decision_seconds_bucket",
    "offload_accounting_queue_depth",
    "offload_accounting_rows_spooled_total",
    "offload_accounting_rows_written_total",
    "offload_rejected_requests_total",
}
VLLM_METRICS = {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"}
_METRIC = re.compile(r"\b(offload_[a-z_]+|vllm:[a-z_]+)")


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


# ------------------------------------------------------------------ parse


@pytest.mark.parametrize(
    "path",
    sorted([*DEPLOY.rglob("*.yml"), *DEPLOY.rglob("*.yaml")]),
    ids=lambda p: str(p.relative_to(DEPLOY)),
)
def test_every_yaml_file_parses(path: Path) -> None:
    assert _docs(path), f"{path} is empty"


# ---------------------------------------------------------------- compose


def _host_path(base: Path, spec: str) -> Path | None:
    """The host side of a compose volume spec, or None for a named volume."""
    source = spec.split(":", 1)[0]
    if not source.startswith((".", "/")):
        return None
    return (base / source).resolve()


def test_compose_references_exist() -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    base = COMPOSE.parent
    services = compose["services"]
    assert {"router", "postgres", "prometheus", "grafana"} <= set(services)
    named = set(compose.get("volumes") or {})
    checked = 0
    for name, service in services.items():
        build = service.get("build")
        if build:
            context = (base / build["context"]).resolve()
            assert context.is_dir(), f"{name}: build context {context}"
            dockerfile = context / build.get("dockerfile", "Dockerfile")
            assert dockerfile.is_file(), f"{name}: {dockerfile}"
            checked += 1
        for spec in service.get("volumes") or []:
            host = _host_path(base, spec)
            if host is None:
                assert spec.split(":", 1)[0] in named, f"{name}: volume {spec} not declared"
                continue
            assert host.exists(), f"{name}: mounts {spec}, but {host} does not exist"
            assert ROOT in host.parents, f"{name}: mounts {host} outside the repository"
            checked += 1
    assert checked >= 5


def test_compose_router_migrates_then_serves_with_existing_config() -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    router = compose["services"]["router"]
    command = " ".join(router["command"]) if isinstance(router["command"], list) else router["command"]
    assert re.search(r"offload db upgrade --config \S+ && exec offload serve --config \S+", command)
    # The config paths inside the container map to files in the repository.
    mounts = {spec.split(":")[1]: spec.split(":")[0] for spec in router["volumes"]}
    for path in re.findall(r"--config (\S+)", command):
        mount = next(m for m in mounts if path.startswith(m + "/"))
        host = (COMPOSE.parent / mounts[mount] / path[len(mount) + 1 :]).resolve()
        assert host.is_file(), f"{path} → {host}"
    assert router["stop_signal"] == "SIGTERM"


def test_compose_prometheus_and_grafana_files() -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    prom = compose["services"]["prometheus"]
    config_arg = next(a for a in prom["command"] if a.startswith("--config.file="))
    assert config_arg.endswith("/prometheus-compose.yml")
    assert (PROM / "prometheus-compose.yml").is_file()
    prov = DEPLOY / "grafana" / "provisioning"
    assert _docs(prov / "datasources" / "prometheus.yml")[0]["datasources"][0]["type"] == "prometheus"
    provider = _docs(prov / "dashboards" / "offload-router.yml")[0]["providers"][0]
    grafana = compose["services"]["grafana"]
    targets = [spec.split(":")[1] for spec in grafana["volumes"]]
    assert any(t.startswith(provider["options"]["path"]) and t.endswith(".json") for t in targets)


def test_dockerfile_copies_and_runs_offload() -> None:
    text = (DEPLOY / "compose" / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.1[1-9]", text, re.M)
    assert 'ENTRYPOINT ["offload"]' in text
    assert "STOPSIGNAL SIGTERM" in text


# ------------------------------------------------------------------- k8s


def _k8s() -> dict[str, dict]:
    out = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in _docs(path):
            if "kind" in doc and doc["kind"] != "Kustomization":
                out[f"{doc['kind']}/{doc['metadata']['name']}"] = doc
    return out


def test_kustomization_resources_exist() -> None:
    kustomization = _docs(K8S / "kustomization.yaml")[0]
    for resource in kustomization["resources"]:
        assert (K8S / resource).is_file(), resource
    assert "secret.example.yaml" not in kustomization["resources"]


def test_k8s_deployment() -> None:
    objs = _k8s()
    dep = objs["Deployment/offload-router"]
    spec = dep["spec"]
    assert spec["replicas"] == 3
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["lifecycle"]["preStop"]
    assert pod["terminationGracePeriodSeconds"] >= 35
    annotations = spec["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/path"] == "/metrics"
    # Every ConfigMap / Secret the pods use is defined (or has an example, for the Secret).
    configmaps = {n.split("/", 1)[1] for n in objs if n.startswith("ConfigMap/")}
    secrets = {n.split("/", 1)[1] for n in objs if n.startswith("Secret/")}
    for workload in (dep, objs["Job/offload-router-db-upgrade"]):
        pod = workload["spec"]["template"]["spec"]
        for volume in pod.get("volumes", []):
            if "configMap" in volume:
                name = volume["configMap"]["name"]
                assert name in configmaps, name
                for item in volume["configMap"].get("items", []):
                    assert item["key"] in objs[f"ConfigMap/{name}"]["data"], item["key"]
        for c in pod["containers"]:
            for ref in c.get("envFrom", []):
                assert ref["secretRef"]["name"] in secrets
            mounted = {m["name"] for m in c.get("volumeMounts", [])}
            assert mounted <= {v["name"] for v in pod.get("volumes", [])}
    # Service and ServiceMonitor select the Deployment's pods on a named port.
    labels = spec["template"]["metadata"]["labels"]
    service = objs["Service/offload-router"]
    assert service["spec"]["selector"].items() <= labels.items()
    port_names = {p["name"] for p in container["ports"]}
    assert service["spec"]["ports"][0]["targetPort"] in port_names
    monitor = objs["ServiceMonitor/offload-router"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["endpoints"][0]["port"] == service["spec"]["ports"][0]["name"]


def test_k8s_migration_job_runs_db_upgrade() -> None:
    job = _k8s()["Job/offload-router-db-upgrade"]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["args"][:2] == ["db", "upgrade"]


def test_k8s_configmap_is_a_valid_router_config() -> None:
    data = _k8s()["ConfigMap/offload-router-config"]["data"]
    raw = yaml.safe_load(data["router.yaml"])
    assert raw["database"]["url"] == "${OFFLOAD_DATABASE_URL}"
    env = {
        "OFFLOAD_DATABASE_URL": "postgresql+psycopg://u:p@db:5432/offload",
        "OPENAI_API_KEY": "sk-test",
        "OFFLOAD_API_KEY": "k",
        "OFFLOAD_ADMIN_KEY": "a",
    }
    config = parse_config(raw, env)
    assert config.database.url.startswith("postgresql+psycopg://")
    local = config.backends["local"]
    assert len(local.urls) >= 2
    # Per-replica share of each Spark: 3 replicas must fit the recipe's max-num-seqs.
    from router.config.recipe import load_recipe

    recipe = load_recipe(ROOT / "config" / "laguna-spark.yaml")
    replicas = _k8s()["Deployment/offload-router"]["spec"]["replicas"]
    assert replicas * local.max_concurrency <= recipe.max_num_seqs
    assert local.context_window <= recipe.max_model_len


def test_k8s_with_kubectl_kustomize() -> None:
    kubectl = shutil.which("kubectl")
    if not kubectl:
        pytest.skip("kubectl not installed: kustomize build not checked")
    out = subprocess.run(
        [kubectl, "kustomize", str(K8S)], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    kinds = {d["kind"] for d in yaml.safe_load_all(out.stdout) if d}
    assert {"ConfigMap", "Deployment", "Service", "Job", "ServiceMonitor"} <= kinds


def test_no_real_secrets_in_examples() -> None:
    for path in [*DEPLOY.rglob("*.example"), *DEPLOY.rglob(".env.example"), K8S / "secret.example.yaml"]:
        text = path.read_text()
        assert not re.search(r"sk-[A-Za-z0-9]{16,}", text), path
        assert not re.search(r"hf_[A-Za-z0-9]{16,}", text), path


# -------------------------------------------------------------- dashboard


def _panels(dashboard: dict) -> list[dict]:
    out = []
    for panel in dashboard["panels"]:
        out.append(panel)
        out += panel.get("panels", [])
    return out


def test_dashboard_json() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] and dashboard["title"]
    assert "__inputs" not in dashboard  # provisioning-ready, not an export with ${DS_...}
    (var,) = [v for v in dashboard["templating"]["list"] if v["type"] == "datasource"]
    assert var["name"] == "datasource" and var["query"] == "prometheus"
    panels = [p for p in _panels(dashboard) if p["type"] != "row"]
    assert len(panels) >= 10
    ids = [p["id"] for p in _panels(dashboard)]
    assert len(ids) == len(set(ids))
    used: set[str] = set()
    for panel in panels:
        assert panel.get("targets"), f"panel {panel['title']!r} has no targets"
        for ds in [panel.get("datasource"), *(t.get("datasource") for t in panel["targets"])]:
            assert ds == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        for target in panel["targets"]:
            assert target["expr"].strip(), panel["title"]
            used |= set(_METRIC.findall(target["expr"]))
    assert used <= PROXY_METRICS | VLLM_METRICS, used - PROXY_METRICS - VLLM_METRICS
    assert used >= PROXY_METRICS, PROXY_METRICS - used
    text = DASHBOARD.read_text()
    # Answered requests only (served, 2xx), as the monthly report counts them.
    ratio = (
        'sum(rate(offload_requests_total{route="local", status_class="2xx"}[$__rate_interval])) '
        '/ sum(rate(offload_requests_total{route!="none", status_class="2xx"}[$__rate_interval]))'
    )
    assert ratio in {t["expr"] for p in panels for t in p["targets"]}
    assert not re.search(r'"uid":\s*"(?!\$\{datasource\}|offload-router")', text)


# ------------------------------------------------------------- prometheus


def test_alert_rules_cover_the_issue() -> None:
    rules = {r["alert"]: r for g in _docs(PROM / "alerts.yml")[0]["groups"] for r in g["rules"]}
    down = rules["OffloadLocalBoxDown"]
    assert 'offload_backend_up{backend="local"}' in down["expr"] and "== 0" in down["expr"]
    assert down["for"] == "5m"
    assert "offload_fallbacks_total" in rules["OffloadFallbackRateHigh"]["expr"]
    assert "offload_accounting_rows_spooled_total" in rules["OffloadAccountingSpooling"]["expr"]
    for rule in rules.values():
        assert set(_METRIC.findall(rule["expr"])) <= PROXY_METRICS | VLLM_METRICS
        assert rule["annotations"]["summary"]


def test_prometheus_scrapes_proxy_and_vllm() -> None:
    for name in ("prometheus.yml", "prometheus-compose.yml"):
        config = _docs(PROM / name)[0]
        jobs = {j["job_name"]: j for j in config["scrape_configs"]}
        assert jobs["offload-router"]["metrics_path"] == "/metrics"
        assert jobs["offload-router"]["static_configs"][0]["targets"][0].endswith(":8080")
        assert jobs["vllm"]["static_configs"][0]["targets"][0].endswith(":8888")
        for rule_file in config["rule_files"]:
            assert (PROM / rule_file).is_file()


def _promtool() -> str:
    found = shutil.which("promtool")
    if not found:
        pytest.skip("promtool not installed (apt-get install prometheus): rules and config not checked")
    return found


def test_promtool_check_rules() -> None:
    out = subprocess.run(
        [_promtool(), "check", "rules", str(PROM / "alerts.yml")], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("name", ["prometheus.yml", "prometheus-compose.yml"])
def test_promtool_check_config(name: str) -> None:
    out = subprocess.run(
        [_promtool(), "check", "config", str(PROM / name)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stdout + out.stderr


# ---------------------------------------------------------------- systemd


def test_units_shape() -> None:
    names = {u.name for u in UNITS}
    assert names == {"offload-router.service", "vllm-laguna.service"}
    router = (DEPLOY / "systemd" / "offload-router.service").read_text()
    assert "ExecStart=/usr/local/bin/offload serve --config /etc/offload-router/router.yaml" in router
    assert "EnvironmentFile=/etc/offload-router/env" in router
    assert "After=network-online.target" in router
    assert "vllm" not in "".join(
        line for line in router.splitlines() if line.startswith(("After=", "Requires=", "BindsTo=", "Wants="))
    )
    assert "Restart=always" in router and "KillSignal=SIGTERM" in router
    assert "UMask=0077" in router.splitlines()  # prompts in the database: nobody else reads them
    stop = int(re.search(r"TimeoutStopSec=(\d+)", router).group(1))
    assert stop > 30  # server.shutdown_grace_s default
    vllm = (DEPLOY / "systemd" / "vllm-laguna.service").read_text()
    assert "vllm-command" in vllm and "--exec" in vllm
    assert "Restart=on-failure" in vllm and "EnvironmentFile=" in vllm
    minutes = int(re.search(r"TimeoutStartSec=(\d+)min", vllm).group(1))
    assert minutes > 10  # about 10 minutes of cold start
    for example in ("offload-router.env.example", "vllm-laguna.env.example"):
        assert (DEPLOY / "systemd" / example).is_file()


def test_systemd_analyze_verify(tmp_path: Path) -> None:
    """``systemd-analyze verify`` on copies whose /usr/local/bin/offload is a stub.

    verify insists that every Exec* binary exists and is executable; the
    ``offload`` entry point is not installed at /usr/local/bin on a CI machine,
    so the copies point at an executable stub in tmp_path with the same
    arguments. Everything else in the units is verified as written.
    """
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        pytest.skip("systemd-analyze not installed: units not verified")
    stub = tmp_path / "offload"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    copies = []
    for unit in UNITS:
        copy = tmp_path / unit.name
        copy.write_text(unit.read_text().replace("/usr/local/bin/offload", str(stub)))
        copies.append(str(copy))
    out = subprocess.run([analyze, "verify", *copies], capture_output=True, text=True, timeout=120)
    if out.returncode != 0 and "Failed to connect to bus" in out.stderr + out.stdout:
        pytest.skip(f"systemd-analyze cannot run here: {out.stderr.strip()[:200]}")
    assert out.returncode == 0, out.stdout + out.stderr
    # verify exits 0 on directives it ignores ("Failed to parse ..., ignoring"):
    # any message about our copies is a failure too.
    assert str(tmp_path) not in out.stdout + out.stderr, out.stdout + out.stderr
