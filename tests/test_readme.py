"""The README's quick start, run as written, with the real clients.

The steps come from README.md itself: ``offload init``, the ``.env`` filled in, the
``set -a && . ./.env && set +a && offload serve`` line, Claude Code's exports, Codex's
provider block and the SDK snippet. The upstreams are the shared fakes (a vLLM box,
OpenAI, Anthropic) on 127.0.0.1, named through the settings the ``.env`` lists. Each
client gets a coding turn (served by ``local``) and a hard maths turn (served by the
cloud backend that speaks its API); with the cloud keys unset the maths turn falls back
to the box; with nothing able to serve it the client gets one error it does not retry.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
import yaml

from router.fake.upstream import RunningFake
from tests.agent_clis import claude_env as cli_claude_env
from tests.agent_clis import cli, run_claude, run_codex
from tests.conftest import fake_config
from tests.harness import CLOUD_KEY, CLOUD_MODEL, LOCAL_MODEL, free_port, wait_until

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
VENV_BIN = ROOT / ".venv" / "bin"
ANTHROPIC_KEY = "sk-ant-cloud-secret-0123456789"  # the anthropic_fake fixture's
ANTHROPIC_MODEL = "claude-sonnet-4-6"
CLIENT_KEY = "sk-offload-team-key-0123456789abcdef"
CODING = "Write a Python function that reverses a list, with a docstring."
MATHS = (
    "Prove that the sum of the reciprocals of the primes diverges, then evaluate the integral "
    "of x^2 e^(-x) from 0 to infinity."
)

needs_clis = pytest.mark.skipif(
    not (cli("codex") and cli("claude")), reason="the agent CLIs are not installed: make clis"
)


def block(after: str, lang: str) -> str:
    """The first fenced ``lang`` block of the README after the text ``after``."""
    start = README.index(after)
    found = re.search(rf"```{lang}\n(.*?)```", README[start:], re.S)
    assert found, f"no {lang} block after {after!r} in README.md"
    return found.group(1)


@dataclass
class Running:
    url: str
    run_dir: Path
    proc: subprocess.Popen[str]
    fakes: dict[str, RunningFake]

    def rows(self) -> list[dict[str, Any]]:
        engine = sa.create_engine(f"sqlite:///{self.run_dir}/offload.db")
        try:
            with engine.connect() as conn:
                if not sa.inspect(conn).has_table("usage"):
                    return []
                result = conn.execute(sa.text("SELECT * FROM usage ORDER BY started_at, id"))
                return [dict(r._mapping) for r in result]
        finally:
            engine.dispose()

    def new_rows(self, before: int, at_least: int = 1) -> list[dict[str, Any]]:
        assert wait_until(lambda: len(self.rows()) >= before + at_least, timeout=15), self.log()
        wait_until(lambda: False, timeout=1.2)  # one more flush interval for stragglers
        return self.rows()[before:]

    def log(self) -> str:
        return (self.run_dir / "proxy.log").read_text()[-4000:]


def quick_start(tmp_path: Path, fakes: dict[str, RunningFake], keys: bool, edit: Any = None) -> Running:
    """Step 2 of the README: init, fill in .env, start the proxy with its serve line."""
    steps = block("**2. The proxy.**", "sh").splitlines()
    init, _edit, serve = (line.split("  #")[0].strip() for line in steps)
    assert init == ".venv/bin/offload init --dir ~/offload"
    assert serve == "set -a && . ./.env && set +a && ~/offload-router/.venv/bin/offload serve"
    run_dir = tmp_path / "offload"
    home = {"~/offload-router": str(ROOT), "~/offload": str(run_dir)}

    def expand(line: str) -> str:
        for short, real in home.items():
            line = line.replace(short, real)
        return line

    subprocess.run(["bash", "-c", expand(init)], cwd=ROOT, check=True, capture_output=True, timeout=60)
    port = free_port()
    values = {
        "OFFLOAD_API_KEY": CLIENT_KEY,
        "OFFLOAD_ADMIN_KEY": "sk-offload-admin-0123456789abcdef",
        "OPENAI_API_KEY": CLOUD_KEY if keys else "",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY if keys else "",
        "OFFLOAD_PORT": str(port),
        "OFFLOAD_LOCAL_URL": fakes["local"].url,
        "OFFLOAD_LOCAL_MODEL": LOCAL_MODEL,
        "OFFLOAD_CLOUD_URL": fakes["cloud"].url,
        "OFFLOAD_CLOUD_MODEL": CLOUD_MODEL,
        "OFFLOAD_ANTHROPIC_URL": fakes["anthropic"].root,
        "OFFLOAD_ANTHROPIC_MODEL": ANTHROPIC_MODEL,
    }
    env_file = run_dir / ".env"
    text = env_file.read_text()
    for var, value in values.items():
        text, n = re.subn(rf"^(# )?{var}=.*$", f"{var}={value}", text, flags=re.M)
        assert n == 1, f".env written by offload init has no line for {var}"
    env_file.write_text(text)
    if edit is not None:
        config_file = run_dir / "config" / "router.yaml"
        config = yaml.safe_load(config_file.read_text())
        edit(config)
        config_file.write_text(yaml.safe_dump(config))
    # Nothing of the caller's keys: the proxy's environment is what the .env gives it.
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    log = (run_dir / "proxy.log").open("w")
    proc = subprocess.Popen(
        ["bash", "-c", expand(serve)],
        cwd=run_dir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    running = Running(f"http://127.0.0.1:{port}", run_dir, proc, fakes)

    def ready() -> bool:
        with contextlib.suppress(httpx.HTTPError):
            return httpx.get(running.url + "/healthz", timeout=1).status_code == 200
        return proc.poll() is not None

    assert wait_until(ready, timeout=30) and proc.poll() is None, running.log()
    return running


@pytest.fixture
def fakes(
    local_fake: RunningFake, cloud_fake: RunningFake, anthropic_fake: RunningFake
) -> dict[str, RunningFake]:
    return {"local": local_fake, "cloud": cloud_fake, "anthropic": anthropic_fake}


@contextlib.contextmanager
def serving(tmp_path: Path, fakes: dict[str, RunningFake], keys: bool, edit: Any = None) -> Iterator[Running]:
    running = quick_start(tmp_path, fakes, keys, edit)
    try:
        yield running
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(running.proc.pid, signal.SIGTERM)
        try:
            running.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(running.proc.pid, signal.SIGKILL)
            running.proc.wait()


# ------------------------------------------------------------------ the clients, as the README has them


def claude_env(home: Path, url: str) -> dict[str, str]:
    """Claude Code's environment: the README's exports (plus the offline switches)."""
    env = cli_claude_env(home, url, "unused")
    del env["ANTHROPIC_API_KEY"]  # the README gives it the client key under its own name
    exports = re.findall(r"^export (\w+)=(\S+)", block("**Claude Code**", "sh"), re.M)
    assert [name for name, _ in exports] == ["ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"]
    for name, value in exports:
        value = value.strip('"').replace("$OFFLOAD_API_KEY", CLIENT_KEY)
        env[name] = value.replace("http://127.0.0.1:8080", url)
    return env


def codex_env(home: Path, url: str) -> dict[str, str]:
    """Codex's environment: the README's provider block in config.toml, the key exported."""
    provider = block("**Codex**", "toml").replace("http://127.0.0.1:8080", url)
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    offline = 'check_for_update_on_startup = false\napproval_policy = "never"\nsandbox_mode = "danger-full-access"\n'
    tables = "\n[features]\nplugins = false\n\n[analytics]\nenabled = false\n"
    (codex_home / "config.toml").write_text(offline + provider + tables)
    env = cli_claude_env(home, url, "unused", offline=False)
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"):
        del env[name]
    return {**env, "CODEX_HOME": str(codex_home), "OFFLOAD_API_KEY": CLIENT_KEY}


# Each fake has the CLI run its own shell tool once, then answers the tool's output with text.
SHELL_CALL = {
    "claude": {"name": "Bash", "arguments": json.dumps({"command": "echo TOOL-OK", "description": "marker"})},
    "codex": {"name": "exec_command", "arguments": json.dumps({"cmd": "echo TOOL-OK"})},
}


def run_cli(name: str, running: Running, tmp_path: Path, prompt: str) -> subprocess.CompletedProcess[str]:
    for fake in running.fakes.values():
        fake_config(fake, tool_call=SHELL_CALL[name])
    home = tmp_path / f"{name}-home-{abs(hash(prompt)) % 10_000}"
    work = home / "project"
    work.mkdir(parents=True)
    if name == "claude":
        return run_claude(work, claude_env(home, running.url), prompt, timeout=240)
    return run_codex(work, codex_env(home, running.url), prompt, timeout=240)


def sdk_clients(url: str) -> dict[str, Any]:
    """The README's SDK snippet, run as written (against the proxy's URL)."""
    code = block("**The OpenAI and Anthropic SDKs**", "python").replace("http://127.0.0.1:8080", url)
    namespace: dict[str, Any] = {}
    saved = os.environ.get("OFFLOAD_API_KEY")
    os.environ["OFFLOAD_API_KEY"] = CLIENT_KEY
    try:
        exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the README's own code
    finally:
        if saved is None:
            os.environ.pop("OFFLOAD_API_KEY")
        else:
            os.environ["OFFLOAD_API_KEY"] = saved
    return namespace


def sdk_turn(clients: dict[str, Any], api: str, prompt: str) -> None:
    if api == "chat":
        clients["openai"].chat.completions.create(
            model="auto", messages=[{"role": "user", "content": prompt}]
        )
    elif api == "responses":
        clients["openai"].responses.create(model="auto", input=prompt)
    else:
        clients["claude"].messages.create(
            model="auto", max_tokens=256, messages=[{"role": "user", "content": prompt}]
        )


CLOUD_BACKEND = {"chat": "cloud", "responses": "cloud", "messages": "claude"}


def served(rows: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    return {(r["api"], r["backend"], r["status"], bool(r["fallback"]), r["fallback_reason"]) for r in rows}


# ------------------------------------------------------------------ tests


def test_the_sdk_snippet_and_both_sdks_with_the_keys_set(
    tmp_path: Path, fakes: dict[str, RunningFake]
) -> None:
    with serving(tmp_path, fakes, keys=True) as running:
        before = len(running.rows())
        clients = sdk_clients(running.url)  # its three coding calls
        rows = running.new_rows(before, 3)
        assert served(rows) == {(api, "local", 200, False, None) for api in ("chat", "responses", "messages")}
        for api, backend in CLOUD_BACKEND.items():
            before = len(running.rows())
            sdk_turn(clients, api, MATHS)
            assert served(running.new_rows(before)) == {(api, backend, 200, False, None)}, api
        # The access log: one line per request, the same request ids as the usage rows.
        lines = [x for x in (running.run_dir / "proxy.log").read_text().splitlines() if "offload.access" in x]
        assert sorted(re.search(r"request_id=(\w+)", x).group(1) for x in lines) == sorted(  # type: ignore[union-attr]
            r["request_id"] for r in running.rows()
        )


@needs_clis
@pytest.mark.parametrize("name", ["claude", "codex"])
def test_each_cli_with_the_keys_set(name: str, tmp_path: Path, fakes: dict[str, RunningFake]) -> None:
    api = "messages" if name == "claude" else "responses"
    with serving(tmp_path, fakes, keys=True) as running:
        for prompt, backend in ((CODING, "local"), (MATHS, CLOUD_BACKEND[api])):
            before = len(running.rows())
            proc = run_cli(name, running, tmp_path, prompt)
            assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:] + running.log()
            rows = running.new_rows(before)
            assert served(rows) == {(api, backend, 200, False, None)}, [
                (r["backend"], r["reason"], r["intent"], r["model_requested"], r["stream"]) for r in rows
            ]


@needs_clis
@pytest.mark.parametrize("name", ["claude", "codex"])
def test_with_the_cloud_keys_unset_maths_is_served_by_the_box(
    name: str, tmp_path: Path, fakes: dict[str, RunningFake]
) -> None:
    api = "messages" if name == "claude" else "responses"
    with serving(tmp_path, fakes, keys=False) as running:
        proc = run_cli(name, running, tmp_path, MATHS)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:] + running.log()
        rows = running.new_rows(0, 2)  # the turn and its tool round trip, decided alike
        assert served(rows) == {(api, "local", 200, True, "unconfigured")}
        assert {r["intent"] for r in rows} == {"math"}


def _box_without_agent_apis(config: dict[str, Any]) -> None:
    config["backends"]["local"]["apis"] = ["chat", "completions", "embeddings"]


@needs_clis
@pytest.mark.parametrize("name", ["claude", "codex"])
def test_with_nothing_able_to_serve_one_error_that_is_not_retried(
    name: str, tmp_path: Path, fakes: dict[str, RunningFake]
) -> None:
    """The box does not serve the agent's API and the cloud key is unset: one error naming
    the variable to set, not retried (Claude Code retried an overloaded 503 eleven times)."""
    api, var = ("messages", "ANTHROPIC_API_KEY") if name == "claude" else ("responses", "OPENAI_API_KEY")
    with serving(tmp_path, fakes, keys=False, edit=_box_without_agent_apis) as running:
        proc = run_cli(name, running, tmp_path, MATHS)
        assert proc.returncode != 0
        assert var in proc.stdout + proc.stderr, proc.stdout[-2000:] + proc.stderr[-2000:]
        rows = running.new_rows(0)
        wait_until(lambda: False, timeout=3)  # a retry would land within its back-off
        rows = running.rows()
        assert len(rows) == 1, rows
        assert (rows[0]["api"], rows[0]["status"], rows[0]["backend"]) == (api, 400, None)
