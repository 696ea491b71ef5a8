"""No cache-busting bytes to vLLM: Claude Code's per-request billing header block (its
``cch=`` changes on every request) is dropped from the front of the system prompt of
bodies bound for a vLLM backend, so consecutive turns share their prefix; bodies to
Anthropic keep it, byte for byte."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import httpx
import orjson

from tests.conftest import fake_state
from tests.harness import ProxyServer
from tests.test_apis import three_backends

RECORDED = Path(__file__).parent / "data" / "agent_requests" / "claude_task.json"


def claude_code_turn(cch: str) -> dict[str, Any]:
    body = copy.deepcopy(orjson.loads(RECORDED.read_bytes())["body"])
    first = body["system"][0]
    assert first["text"].startswith("x-anthropic-billing-header:")  # the recorded layout
    first["text"] = first["text"] + f" cch={cch};"
    return body


def sent_to(fake: Any) -> list[dict[str, Any]]:
    return [r["body"] for r in fake_state(fake)["received"] if r["path"] == "/v1/messages"]


def _post(proxy: ProxyServer, body: dict[str, Any], route: str) -> httpx.Response:
    headers = {"anthropic-version": "2023-06-01", "x-offload-route": route, "x-api-key": "unused"}
    return httpx.post(f"{proxy.url}/v1/messages?beta=true", json=body, headers=headers, timeout=30)


def test_the_billing_header_never_reaches_vllm(local_fake, cloud_fake, anthropic_fake) -> None:
    proxy = ProxyServer(three_backends(local_fake, cloud_fake, anthropic_fake))
    try:
        for cch in ("1a2b3", "9f8e7"):
            assert _post(proxy, claude_code_turn(cch), "local").status_code == 200
        first, second = sent_to(local_fake)
        assert all(
            "x-anthropic-billing-header" not in orjson.dumps(b["system"]).decode() for b in (first, second)
        )
        assert first["system"] == second["system"]  # the same prefix, turn after turn
        assert first["system"][0]["text"].startswith("You are a Claude agent")
        # Anthropic bills by it: untouched there.
        assert _post(proxy, claude_code_turn("c0ffe"), "claude").status_code == 200
        (to_anthropic,) = sent_to(anthropic_fake)
        assert to_anthropic["system"][0]["text"].endswith("cch=c0ffe;")
    finally:
        proxy.stop()


def test_it_can_be_turned_off(local_fake, cloud_fake, anthropic_fake) -> None:
    config = three_backends(
        local_fake, cloud_fake, anthropic_fake, backend_changes={"local": {"strip_billing_header": False}}
    )
    proxy = ProxyServer(config)
    try:
        assert _post(proxy, claude_code_turn("1a2b3"), "local").status_code == 200
        (sent,) = sent_to(local_fake)
        assert sent["system"][0]["text"].startswith("x-anthropic-billing-header:")
    finally:
        proxy.stop()
