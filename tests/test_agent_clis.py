"""The real Codex CLI and Claude Code, installed from npm (``make clis``), run offline.

Two layers:

* *wire* tests run each CLI straight against ``tests/recording_server.py`` and pin
  what it sends (paths, headers, body fields): the facts the proxy's Responses and
  Messages support and the request fixtures in ``tests/data/agent_requests`` rest on;
* *proxy* tests run each CLI through the real proxy to the fake vLLM, on a coding
  task the fake answers first with a call of the CLI's own shell tool and then, once
  the CLI has run it and sent its output back, with text.

Every run has its own HOME (and CODEX_HOME), no stdin, a timeout and only
127.0.0.1 addresses; see ``tests/agent_clis.py`` for what keeps each CLI offline.
Codex runs with a proxy trap as ``HTTP(S)_PROXY``: anything it tried to reach
elsewhere would be recorded, and the tests require that nothing was.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from router.fake.protocol import Behaviour
from router.fake.replies import cache_split, plan_reply, prompt_tokens
from router.fake.upstream import RunningFake
from tests.agent_clis import claude_env, cli, codex_env, run_claude, run_codex
from tests.conftest import fake_config, fake_state
from tests.harness import ProxyServer, wait_until
from tests.recording_server import DEFAULT_REPLY, TOOL_OUTPUT_MARKER, RunningRecorder, start_in_thread

pytestmark = pytest.mark.skipif(
    not (cli("codex") and cli("claude")), reason="the agent CLIs are not installed: make clis"
)

KEY = "sk-client-test-0123456789"
# The command the fake has each CLI run: its output (TOOL-OK-42) is not in the command itself.
COMMAND = "echo TOOL-OK-$((6*7))"
FAKE_TEXT = "".join(Behaviour().reply_tokens)  # "Hello there, I am a fake model."


@pytest.fixture
def recorder() -> Iterator[RunningRecorder]:
    server = start_in_thread()
    yield server
    server.stop()


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, workdir = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    workdir.mkdir()
    return home, workdir


def _explain(proc: Any) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"


# ------------------------------------------------------------------ wire


def test_codex_wire(recorder: RunningRecorder, tmp_path: Path) -> None:
    home, workdir = _dirs(tmp_path)
    env = codex_env(home, recorder.url + "/v1", KEY, "auto", trap_url=recorder.trap_url)
    proc = run_codex(workdir, env)
    assert proc.returncode == 0, _explain(proc)
    assert DEFAULT_REPLY in proc.stdout
    assert recorder.recorder.trapped == [], "Codex tried to reach the internet"

    # Only Responses calls: no /v1/models, no WebSocket upgrade, no /responses/compact.
    assert [(r["method"], r["path"]) for r in recorder.requests] == [("POST", "/v1/responses")] * 2
    task, follow_up = recorder.requests
    for request in (task, follow_up):
        headers, body = request["headers"], request["body"]
        assert request["credential"] == KEY and headers["authorization"].startswith("Bearer ")
        assert headers["accept"] == "text/event-stream"
        assert headers["originator"] == "codex_exec"
        assert headers["user-agent"].startswith("codex_exec/0.171.0")
        assert headers["session-id"] == headers["thread-id"] and "x-codex-turn-metadata" in headers
        assert "content-encoding" not in headers  # the body is plain JSON for a custom provider
        assert body["stream"] is True and body["store"] is False and body["tool_choice"] == "auto"
        assert body["model"] == "auto"
        # Never sent: the proxy has to cap the output and can never see a previous_response_id.
        for absent in ("max_output_tokens", "previous_response_id", "temperature", "instructions"):
            assert absent not in body
        assert body["include"] == ["reasoning.encrypted_content"]
        assert body["prompt_cache_key"] == headers["session-id"]
        # The base instructions travel as the first (developer) input message.
        assert body["input"][0]["role"] == "developer"
        kinds = {t["type"] for t in body["tools"]}
        assert "exec_command" in [t.get("name") for t in body["tools"]]
        # Tool kinds vLLM has no use for: a hosted web search and a namespace of sub-agent tools.
        assert {"function", "web_search", "namespace"} <= kinds
    call = next(i for i in follow_up["body"]["input"] if i.get("type") == "function_call")
    output = next(i for i in follow_up["body"]["input"] if i.get("type") == "function_call_output")
    assert call["name"] == "exec_command" and output["call_id"] == call["call_id"]
    assert TOOL_OUTPUT_MARKER in output["output"]


def test_claude_wire(recorder: RunningRecorder, tmp_path: Path) -> None:
    home, workdir = _dirs(tmp_path)
    env = claude_env(home, recorder.url, KEY, trap_url=recorder.trap_url)
    proc = run_claude(workdir, env)
    assert proc.returncode == 0, _explain(proc)
    assert DEFAULT_REPLY in proc.stdout
    assert recorder.recorder.trapped == [], "Claude Code tried to reach the internet"

    # With a proxy set Claude Code skips its HEAD / probe (see test_claude_through_proxy),
    # and with non-essential traffic off it sends no title or other chores.
    assert [(r["method"], r["path"]) for r in recorder.requests] == [("POST", "/v1/messages?beta=true")] * 2
    task, follow_up = recorder.requests
    for request in (task, follow_up):
        headers, body = request["headers"], request["body"]
        assert request["credential"] == KEY and "x-api-key" in headers and "authorization" not in headers
        assert headers["anthropic-version"] == "2023-06-01"
        assert "claude-code-20250219" in headers["anthropic-beta"].split(",")
        assert headers["user-agent"].startswith("claude-cli/2.1.197")
        assert headers["x-app"] == "cli"
        assert body["stream"] is True and body["max_tokens"] > 0
        assert body["model"].startswith("claude-")
        assert body["thinking"] == {"type": "adaptive"}
        assert body["system"][0]["text"].startswith("x-anthropic-billing-header")
        assert set(body["metadata"]) == {"user_id"}
        assert "Bash" in [t["name"] for t in body["tools"]]
        assert all("input_schema" in t for t in body["tools"])  # no server tools
        # A mid-conversation system message (the mid-conversation-system beta).
        assert [m["role"] for m in body["messages"][:2]] == ["user", "system"]
    last = follow_up["body"]["messages"][-1]
    result = next(b for b in last["content"] if b["type"] == "tool_result")
    assert last["role"] == "user" and TOOL_OUTPUT_MARKER in json.dumps(result["content"])


# ----------------------------------------------------------------- proxy


def _check_proxy_run(
    proxy: ProxyServer, fake: RunningFake, api: str, path: str, tool: dict[str, str]
) -> None:
    received = [r for r in fake_state(fake)["received"] if r["path"] == path]
    assert len(received) >= 2, f"the fake saw {len(received)} {path} requests"
    # The tool round trip went through the proxy: the fake got the command's output back.
    assert any(TOOL_OUTPUT_MARKER in json.dumps(r["body"]) for r in received[1:])
    assert wait_until(lambda: len(_rows(proxy, api)) >= len(received))
    rows = _rows(proxy, api)
    assert len(rows) == len(received)
    behaviour = Behaviour(tool_call=tool)
    for row, request in zip(rows, received, strict=True):
        assert (row.status, row.backend, row.api) == (200, "local", api)
        # The upstream's usage, recomputed the way the fake computed it from what it received.
        body = request["body"]
        reply = plan_reply(api, "vllm", body, behaviour)
        cached, _ = cache_split(api, "vllm", body)
        assert (row.prompt_tokens, row.completion_tokens) == (prompt_tokens(api, body), reply.output_tokens)
        # Messages usage has no reasoning count (thinking is inside output_tokens).
        reasoning = len(reply.reasoning) if api == "responses" else 0
        assert (row.cached_tokens, row.reasoning_tokens) == (cached, reasoning)
        assert row.tokens_estimated is False


def _rows(proxy: ProxyServer, api: str) -> list[Any]:
    return [r for r in proxy.state.recorder.rows if r.endpoint == api]


# "auto" is a name Codex does not know (fallback metadata, no reasoning effort); for a model it
# knows it adds a reasoning effort, text.verbosity, tool_search and a grammar-format custom tool
# (apply_patch) that vLLM refuses with a 400.
@pytest.mark.parametrize("model", ["auto", "gpt-5.5"])
def test_codex_through_proxy(
    proxy: ProxyServer, local_fake: RunningFake, recorder: RunningRecorder, tmp_path: Path, model: str
) -> None:
    tool = {"name": "exec_command", "arguments": json.dumps({"cmd": COMMAND})}
    fake_config(local_fake, tool_call=tool)
    home, workdir = _dirs(tmp_path)
    env = codex_env(home, proxy.base_url, KEY, model, trap_url=recorder.trap_url)
    proc = run_codex(workdir, env)
    assert proc.returncode == 0, _explain(proc)
    assert FAKE_TEXT in proc.stdout
    assert recorder.recorder.trapped == [], "Codex tried to reach the internet"
    _check_proxy_run(proxy, local_fake, "responses", "/v1/responses", tool)


# Claude Code's own model name (claude-opus-4-8, routed by the policy), or the route pinned
# with its ANTHROPIC_MODEL and ANTHROPIC_CUSTOM_HEADERS settings.
@pytest.mark.parametrize("pinned", [False, True], ids=["claude-model", "pinned"])
def test_claude_through_proxy(
    proxy: ProxyServer, local_fake: RunningFake, tmp_path: Path, pinned: bool
) -> None:
    tool = {"name": "Bash", "arguments": json.dumps({"command": COMMAND, "description": "Print a marker"})}
    fake_config(local_fake, tool_call=tool)
    home, workdir = _dirs(tmp_path)
    # No proxy trap here: with HTTP(S)_PROXY set Claude Code would skip its HEAD / probe.
    env = claude_env(home, proxy.url, KEY)
    if pinned:
        env.update(ANTHROPIC_MODEL="local", ANTHROPIC_CUSTOM_HEADERS="x-offload-route: local")
    proc = run_claude(workdir, env)
    assert proc.returncode == 0, _explain(proc)
    assert FAKE_TEXT in proc.stdout
    _check_proxy_run(proxy, local_fake, "messages", "/v1/messages", tool)
    rows = _rows(proxy, "messages")
    assert rows[0].model_requested == ("local" if pinned else "claude-opus-4-8")
    if pinned:
        assert rows[0].reason.startswith("override")
    # Claude Code probes the host root (without a key) and ignores the answer: it must be 200.
    assert httpx.head(proxy.url + "/", timeout=5).status_code == 200
