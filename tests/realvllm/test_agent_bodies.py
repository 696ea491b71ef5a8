"""Every recorded Codex and Claude Code body, through the proxy to a real vLLM, twice.

The second send of the same body is a prefix-cache hit: vLLM reports cached tokens
(``--enable-prompt-tokens-details``), and the row carries them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.harness import ProxyServer
from tests.realvllm.wire import answer_of, reported_usage, row_for

AGENT_REQUESTS = Path(__file__).resolve().parent.parent / "data" / "agent_requests"
FIXTURES = sorted(p.name for p in AGENT_REQUESTS.glob("*.json"))
# What the CLIs sent besides the key, the host and the length: betas, versions, session ids.
DROPPED_HEADERS = {"authorization", "x-api-key", "host", "content-length", "accept-encoding"}


def _send(proxy: ProxyServer, recorded: dict[str, Any]) -> httpx.Response:
    headers = {k: v for k, v in recorded["headers"].items() if k not in DROPPED_HEADERS}
    headers["x-offload-route"] = "local"  # the classifier's choice is not what this tests
    return httpx.post(proxy.url + recorded["path"], json=recorded["body"], headers=headers, timeout=600)


@pytest.mark.parametrize("fixture", FIXTURES)
def test_recorded_body_twice_second_is_a_cache_hit(
    real_proxy: ProxyServer, block_size: int, fixture: str
) -> None:
    recorded = json.loads((AGENT_REQUESTS / fixture).read_text())
    api = "messages" if recorded["path"].startswith("/v1/messages") else "responses"
    stream = bool(recorded["body"].get("stream"))
    seen = []
    for _ in range(2):
        response = _send(real_proxy, recorded)
        assert response.status_code == 200, response.text[:2000]
        assert response.headers["x-offload-route"] == "local"
        answer = answer_of(response, stream)
        if stream:
            names = [name for name, _ in answer]
            assert names[-1] == ("message_stop" if api == "messages" else "response.completed"), names[-3:]
        usage = reported_usage(api, answer, stream)
        row = row_for(real_proxy, response)
        assert (row.status, row.backend, row.api) == (200, "local", api)
        assert (row.prompt_tokens, row.completion_tokens, row.cached_tokens) == usage
        seen.append(usage)
    (prompt1, _, cached1), (prompt2, _, cached2) = seen
    assert prompt1 == prompt2  # the same body renders to the same prompt
    # All of the prompt but its last (partial) block came from the cache the first send
    # filled: whole blocks only (vLLM always computes the last token itself).
    assert cached2 % block_size == 0 and prompt2 - block_size <= cached2 < prompt2, (seen, block_size)
