"""Where the shared state shows and ships: /readyz and the metric (with and without a
``state:`` key), the alert rule (promtool, with a rule unit test), the compose service and
the Kubernetes component (kept in step with the base ConfigMap)."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from router.config import parse_config
from router.config.recipe import load_recipe
from tests.harness import ProxyServer, make_config, wait_until
from tests.test_shared_state_logic import REDIS_URL, need_redis

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
COMPONENT = K8S / "shared-state"
RULES = DEPLOY / "prometheus" / "shared-state-alerts.yml"
K8S_ENV = {
    "OFFLOAD_DATABASE_URL": "postgresql+psycopg://u:p@db:5432/offload",
    "OPENAI_API_KEY": "sk-test",
    "OFFLOAD_API_KEY": "k",
    "OFFLOAD_ADMIN_KEY": "a",
}


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def _router_yaml(path: Path) -> dict[str, Any]:
    (configmap,) = [d for d in _docs(path) if d.get("kind") == "ConfigMap"]
    return yaml.safe_load(configmap["data"]["router.yaml"])


# ------------------------------------------------------------ readyz, metric


def _metric(proxy: ProxyServer) -> list[str]:
    return [ln for ln in proxy.get("/metrics").text.splitlines() if ln.startswith("offload_shared_state_up")]


def test_in_process_shows_nothing_shared(local_fake: Any, cloud_fake: Any) -> None:
    proxy = ProxyServer(make_config(local_fake.url, cloud_fake.url))
    try:
        assert "shared_state" not in proxy.get("/readyz").json()
        assert _metric(proxy) == []
    finally:
        proxy.stop()


def test_shared_state_in_readyz_and_metric(local_fake: Any, cloud_fake: Any) -> None:
    need_redis()
    prefix = f"offload-test-{uuid.uuid4().hex[:12]}"
    state = {"redis_url": REDIS_URL, "replicas": 2, "key_prefix": prefix, "timeout_ms": 1000}
    proxy = ProxyServer(make_config(local_fake.url, cloud_fake.url, state=state))
    try:
        ok = proxy.post(
            "/v1/chat/completions", json={"model": "local", "messages": [{"role": "user", "content": "hi"}]}
        )
        assert ok.status_code == 200
        ready = proxy.get("/readyz").json()
        shared = ready["shared_state"]
        assert shared["mode"] == "shared" and shared["redis"] == "up" and shared["replicas"] == 2
        (endpoint,) = shared["endpoints"].values()  # the local backend's one endpoint
        assert set(endpoint) == {"in_flight_all_replicas", "leases_here"}
        assert wait_until(lambda: proxy.get("/readyz").json()["backends"]["local"]["in_flight"] == 0)
        assert _metric(proxy) == ["offload_shared_state_up 1.0"]
    finally:
        proxy.stop()
        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(f"{prefix}:*"):
            client.delete(key)
        client.close()


# ------------------------------------------------------------------ alert


def test_alert_rule_file_is_loaded_and_names_the_metric() -> None:
    (group,) = _docs(RULES)[0]["groups"]
    (rule,) = group["rules"]
    assert rule["alert"] == "OffloadSharedStateDown" and "offload_shared_state_up" in rule["expr"]
    assert rule["annotations"]["runbook"] == "docs/operations.md#capacity-with-one-replica-or-many"
    assert "### Capacity with one replica or many" in (ROOT / "docs" / "operations.md").read_text()
    for name in ("prometheus.yml", "prometheus-compose.yml"):
        assert RULES.name in _docs(DEPLOY / "prometheus" / name)[0]["rule_files"]


def test_alert_fires_after_two_minutes_of_fallback(tmp_path: Path) -> None:
    """promtool's rule unit test: one replica's metric drops to 0; the alert is pending,
    then firing after 2 minutes; a replica without state: exports nothing and never fires."""
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (apt-get install prometheus)")
    (rule,) = _docs(RULES)[0]["groups"][0]["rules"]
    firing = {"exp_labels": {"severity": "ticket"}, "exp_annotations": rule["annotations"]}
    test = {
        "rule_files": [str(RULES)],
        "evaluation_interval": "30s",
        "tests": [
            {
                "interval": "30s",
                "input_series": [
                    {"series": 'offload_shared_state_up{instance="a"}', "values": "1 1 0 0 0 0 0 0 1 1"},
                    {"series": 'offload_shared_state_up{instance="b"}', "values": "1x9"},
                ],
                "alert_rule_test": [
                    {"eval_time": "1m", "alertname": "OffloadSharedStateDown", "exp_alerts": []},
                    {"eval_time": "3m", "alertname": "OffloadSharedStateDown", "exp_alerts": [firing]},
                    {"eval_time": "4m30s", "alertname": "OffloadSharedStateDown", "exp_alerts": []},
                ],
            }
        ],
    }
    path = tmp_path / "shared-state-test.yml"
    path.write_text(yaml.safe_dump(test))
    out = subprocess.run([promtool, "test", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


# ---------------------------------------------------------------- compose


def test_compose_redis_is_optional() -> None:
    compose = yaml.safe_load((DEPLOY / "compose" / "docker-compose.yml").read_text())
    redis_service = compose["services"]["redis"]
    assert redis_service["profiles"] == ["shared-state"]  # not started by a plain `up`
    assert "redis" not in str(compose["services"]["router"].get("depends_on", {}))
    assert compose["services"]["router"]["environment"]["OFFLOAD_REDIS_URL"].endswith("redis://redis:6379/0}")


# --------------------------------------------------------------------- k8s


def test_k8s_component_differs_from_the_base_only_by_shared_state() -> None:
    base, shared = _router_yaml(K8S / "configmap.yaml"), _router_yaml(COMPONENT / "configmap.yaml")
    state = shared.pop("state")
    shared_local = shared["backends"]["local"].pop("max_concurrency")
    base_local = base["backends"]["local"].pop("max_concurrency")
    assert shared == base
    recipe = load_recipe(ROOT / "config" / "laguna-spark.yaml")
    replicas = [d for d in _docs(K8S / "deployment.yaml") if d["kind"] == "Deployment"][0]["spec"]["replicas"]
    assert shared_local == recipe.max_num_seqs  # the whole box, shared
    assert state["replicas"] == replicas
    assert replicas * (shared_local // replicas) <= recipe.max_num_seqs  # the fallback fits the box
    assert base_local * replicas <= recipe.max_num_seqs
    raw = _router_yaml(COMPONENT / "configmap.yaml")
    config = parse_config(raw, K8S_ENV)
    assert config.state is not None and config.state.redis_url == "redis://offload-router-redis:6379/0"


def test_k8s_component_resources() -> None:
    kustomization = _docs(COMPONENT / "kustomization.yaml")[0]
    assert kustomization["kind"] == "Component"
    for item in [*kustomization["resources"], *(p["path"] for p in kustomization["patches"])]:
        assert (COMPONENT / item).is_file(), item
    # Optional: the shipped base does not include it (its README says how).
    assert "components" not in _docs(K8S / "kustomization.yaml")[0]
    objs = {f"{d['kind']}/{d['metadata']['name']}": d for d in _docs(COMPONENT / "redis.yaml")}
    deployment, service = objs["Deployment/offload-router-redis"], objs["Service/offload-router-redis"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert deployment["spec"]["selector"]["matchLabels"] == labels
    # Not the proxy's pods: the router Service must not select Redis.
    router_service = [d for d in _docs(K8S / "service.yaml") if d["kind"] == "Service"][0]
    assert not router_service["spec"]["selector"].items() <= labels.items()


def test_k8s_component_builds_into_the_base(tmp_path: Path) -> None:
    """What the README asks: the base with `components: [shared-state]` builds, with Redis
    and the state: key; the base as shipped has neither."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed: kustomize build not checked")
    copy = tmp_path / "k8s"
    shutil.copytree(K8S, copy)
    built: dict[str, list[dict[str, Any]]] = {}
    for name, extra in (("base", ""), ("shared", "components:\n  - shared-state\n")):
        (copy / "kustomization.yaml").write_text((K8S / "kustomization.yaml").read_text() + extra)
        out = subprocess.run([kubectl, "kustomize", str(copy)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        built[name] = [d for d in yaml.safe_load_all(out.stdout) if d]
    for name, docs in built.items():
        (configmap,) = [d for d in docs if d["kind"] == "ConfigMap"]
        redis_objects = [d for d in docs if d["metadata"]["name"] == "offload-router-redis"]
        assert ("state:" in configmap["data"]["router.yaml"]) == (name == "shared")
        assert len(redis_objects) == (2 if name == "shared" else 0)
