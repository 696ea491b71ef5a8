"""The tools to check routing agree with routing: ``POST /offload/route?api=...`` and
``offload classify --api ...`` report the backend the real request is served by, for the
bodies the real agent CLIs send (``tests/data/agent_requests/``), side traffic included."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from router.config import DEFAULT_CONFIG_PATH, parse_config
from router.decide.policy import load_classifier
from router.fake.upstream import RunningFake
from router.ops.cli import main as offload
from tests.harness import CLOUD_KEY, CLOUD_MODEL, LOCAL_MODEL, ProxyServer, wait_until

ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT / "tests" / "data" / "agent_requests"
MATHS = "Prove that there are infinitely many primes, then evaluate the integral of x^2 e^(-x) from 0 to infinity."
# Where the default config sends each recorded request, and why.
EXPECTED = {
    "claude_chore_title.json": ("local", "rule:claude-code-titles"),
    "codex_chore_compaction.json": ("local", "rule:codex-compaction"),
}


def starter_env(
    local: RunningFake, cloud: RunningFake, claude: RunningFake, keys: bool = True
) -> dict[str, str]:
    return {
        "OFFLOAD_LOCAL_URL": local.url,
        "OFFLOAD_LOCAL_MODEL": LOCAL_MODEL,
        "OFFLOAD_CLOUD_URL": cloud.url,
        "OFFLOAD_CLOUD_MODEL": CLOUD_MODEL,
        "OFFLOAD_ANTHROPIC_URL": claude.root,
        "OFFLOAD_ANTHROPIC_MODEL": "claude-sonnet-4-6",
        **(
            {"OPENAI_API_KEY": CLOUD_KEY, "ANTHROPIC_API_KEY": "sk-ant-cloud-secret-0123456789"}
            if keys
            else {}
        ),
    }


def starter_raw() -> dict[str, Any]:
    raw = yaml.safe_load((ROOT / DEFAULT_CONFIG_PATH).read_text())
    raw["database"] = {"enabled": False}
    del raw["backends"]["local"]["recipe"]  # the recipe's limits do not matter here
    return raw


@pytest.fixture
def proxy(
    local_fake: RunningFake, cloud_fake: RunningFake, anthropic_fake: RunningFake
) -> Iterator[ProxyServer]:
    config = parse_config(starter_raw(), env=starter_env(local_fake, cloud_fake, anthropic_fake))
    server = ProxyServer(config, classifier=load_classifier(None))
    yield server
    server.stop()


def recorded() -> list[tuple[str, str, dict[str, Any]]]:
    """(file name, API, request) of every recorded agent request."""
    out = []
    for file in sorted(RECORDED.glob("*.json")):
        doc = json.loads(file.read_text())
        api = "messages" if doc["path"].startswith("/v1/messages") else "responses"
        out.append((file.name, api, doc))
    return out


def _send(proxy: ProxyServer, doc: dict[str, Any]) -> httpx.Response:
    headers = {k: v for k, v in doc["headers"].items() if k not in ("host", "x-api-key", "authorization")}
    headers["accept-encoding"] = "identity"
    return httpx.post(proxy.url + doc["path"], json=doc["body"], headers=headers, timeout=30)


def test_route_reports_what_each_recorded_agent_request_really_gets(proxy: ProxyServer) -> None:
    for name, api, doc in recorded():
        plan = httpx.post(f"{proxy.url}/offload/route?api={api}", json=doc["body"], timeout=10).json()
        before = len(proxy.state.recorder.rows)
        assert _send(proxy, doc).status_code == 200, name
        assert wait_until(lambda n=before: len(proxy.state.recorder.rows) > n)
        row = proxy.state.recorder.rows[-1]
        assert (plan["backend"], plan["intent"], plan["reason"]) == (row.backend, row.intent, row.reason), (
            name
        )
        assert plan["api"] == row.api == api
        if name in EXPECTED:
            assert (row.backend, row.reason) == EXPECTED[name]


@pytest.mark.parametrize(
    ("api", "body", "backend"),
    [
        (
            "messages",
            {"model": "auto", "max_tokens": 64, "messages": [{"role": "user", "content": MATHS}]},
            "claude",
        ),
        ("responses", {"model": "auto", "input": MATHS}, "cloud"),
        ("chat", {"model": "auto", "messages": [{"role": "user", "content": MATHS}]}, "cloud"),
    ],
)
def test_a_cloud_bound_turn_names_the_backend_of_its_api(
    proxy: ProxyServer, api: str, body: dict[str, Any], backend: str
) -> None:
    plan = httpx.post(f"{proxy.url}/offload/route?api={api}", json=body, timeout=10).json()
    assert (plan["decided_route"], plan["route"], plan["backend"]) == ("cloud", "cloud", backend)
    assert plan["candidates"] == [backend, "local"]


def test_route_rejects_an_unknown_api(proxy: ProxyServer) -> None:
    answer = httpx.post(f"{proxy.url}/offload/route?api=grpc", json={"input": "x"}, timeout=10)
    assert answer.status_code == 400 and "api must be one of chat, responses, messages" in answer.text


def test_classify_cli_agrees_with_the_route_endpoint(
    proxy: ProxyServer,
    local_fake: RunningFake,
    cloud_fake: RunningFake,
    anthropic_fake: RunningFake,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = tmp_path / "router.yaml"
    config.write_text(yaml.safe_dump(starter_raw()))
    for var, value in starter_env(local_fake, cloud_fake, anthropic_fake).items():
        monkeypatch.setenv(var, value)
    for api in ("messages", "responses"):
        docs = [(name, doc) for name, a, doc in recorded() if a == api]
        batch = tmp_path / f"{api}.jsonl"
        batch.write_text(
            "".join(json.dumps({"id": name, "request": doc["body"]}) + "\n" for name, doc in docs)
        )
        out = io.StringIO()
        with redirect_stdout(out):
            assert offload(["classify", "--config", str(config), "--api", api, "--batch", str(batch)]) == 0
        lines = {line["id"]: line for line in map(json.loads, out.getvalue().splitlines())}
        for name, doc in docs:
            plan = httpx.post(f"{proxy.url}/offload/route?api={api}", json=doc["body"], timeout=10).json()
            got = lines[name]
            assert set(got) == {"id", "intent", "confidence", "route", "backend", "reason"}
            assert (got["backend"], got["route"], got["reason"]) == (
                plan["backend"],
                plan["route"],
                plan["reason"],
            )
    out = io.StringIO()
    with redirect_stdout(out):
        assert offload(["classify", "--config", str(config), "--api", "messages", MATHS]) == 0
    assert json.loads(out.getvalue())["backend"] == "claude"
