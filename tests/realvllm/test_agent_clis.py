"""Codex CLI and Claude Code, each one non-interactive turn through the proxy to a real
vLLM: the CLI exits cleanly and prints the answer vLLM generated (garbage text, well
formed), and the usage rows add up to what vLLM itself counted (its Prometheus counters).
Tool round trips stay on the fake (tests/test_agent_clis.py), whose answers are scripted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from router.fake.upstream import RunningFake
from tests.agent_clis import TASK, claude_env, cli, codex_env, run_claude, run_codex
from tests.harness import ProxyServer, wait_until
from tests.realvllm.conftest import real_config
from tests.realvllm.server import VllmServer
from tests.recording_server import RunningRecorder, start_in_thread

pytestmark = pytest.mark.skipif(
    not (cli("codex") and cli("claude")), reason="the agent CLIs are not installed: make clis"
)
KEY = "sk-client-test-0123456789"
COUNTERS = ("vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:prefix_cache_hits_total")


def text_proxy(vllm: VllmServer, cloud: RunningFake, thinking: str = "client") -> ProxyServer:
    """A proxy that keeps the completion text in its rows, to compare with what the CLI printed."""
    database = {"enabled": False, "store_text": True}
    return ProxyServer(real_config(vllm.url, cloud.url, local={"thinking": thinking}, database=database))


@pytest.fixture
def trap() -> Iterator[RunningRecorder]:
    server = start_in_thread()
    yield server
    server.stop()


def counters(vllm: VllmServer) -> tuple[float, ...]:
    text = vllm.metrics().splitlines()
    return tuple(
        sum(float(line.rsplit(" ", 1)[1]) for line in text if line.startswith(name)) for name in COUNTERS
    )


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, workdir = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    workdir.mkdir()
    return home, workdir


def _check_run(proc: Any, proxy: ProxyServer, vllm: VllmServer, before: tuple[float, ...], api: str) -> None:
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    rows = [r for r in proxy.state.recorder.rows if r.api == api and r.endpoint == api]
    assert rows, "no request reached the proxy"
    for row in rows:
        assert (row.status, row.backend, row.tokens_estimated) == (200, "local", False), row
        assert row.prompt_tokens > 0 and row.completion_tokens > 0
    # The CLI printed the text vLLM generated for its last turn, as its answer.
    answer = rows[-1].completion_text
    assert answer and answer.strip() in proc.stdout, (answer, proc.stdout[-2000:])
    # The rows hold what vLLM counted: prompt tokens (cached ones included), generated
    # tokens and prefix-cache hits. The CLI is this server's only client meanwhile.
    sums = (
        sum(r.prompt_tokens for r in rows),
        sum(r.completion_tokens for r in rows),
        sum(r.cached_tokens for r in rows),
    )
    assert wait_until(
        lambda: tuple(a - b for a, b in zip(counters(vllm), before, strict=True)) == sums, 10
    ), (
        sums,
        counters(vllm),
        before,
    )


def test_codex_one_turn(
    vllm: VllmServer, tier_cloud: RunningFake, trap: RunningRecorder, tmp_path: Path
) -> None:
    proxy = text_proxy(vllm, tier_cloud)
    try:
        home, workdir = _dirs(tmp_path)
        env = codex_env(home, proxy.base_url, KEY, "auto", trap_url=trap.trap_url)
        before = counters(vllm)
        proc = run_codex(workdir, env, prompt=TASK, timeout=300)
        assert trap.recorder.trapped == [], "Codex tried to reach the internet"
        _check_run(proc, proxy, vllm, before, "responses")
    finally:
        proxy.stop()


def test_claude_code_one_turn(vllm: VllmServer, tier_cloud: RunningFake, tmp_path: Path) -> None:
    """Claude Code asks for adaptive thinking; the tiny model never closes a thought, so with
    thinking on its whole reply is reasoning and Claude Code prints nothing. The backend is
    set to ``thinking: off`` (as an operator may): Claude Code gets text to print."""
    proxy = text_proxy(vllm, tier_cloud, thinking="off")
    try:
        home, workdir = _dirs(tmp_path)
        env = claude_env(home, proxy.url, KEY)
        before = counters(vllm)
        proc = run_claude(workdir, env, prompt=TASK, timeout=300)
        _check_run(proc, proxy, vllm, before, "messages")
        assert {row.thinking for row in proxy.state.recorder.rows} == {"off"}
    finally:
        proxy.stop()
