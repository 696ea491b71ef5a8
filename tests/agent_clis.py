"""Run the real agent CLIs (OpenAI Codex, Claude Code) offline against a server on 127.0.0.1.

``make clis`` installs both from npm into ``.venv/node``. Each run gets its own
HOME (and CODEX_HOME), a minimal environment (nothing of the caller's keys or
proxies leaks in), no stdin and a timeout. What keeps each CLI off the internet
(checked by tracing every ``connect()`` of a run in a network namespace):

* Codex: a custom ``[model_providers.*]`` (not the built-in ``openai`` one),
  ``[features] plugins = false`` (otherwise
  it runs ``git ls-remote https://github.com/openai/plugins.git`` and calls
  api.github.com and chatgpt.com at start-up), ``[analytics] enabled = false``
  and ``check_for_update_on_startup = false``.
* Claude Code: ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` (otherwise it fetches
  bootstrap data, the fast-mode status and the MCP registry from api.anthropic.com,
  even with the three below set), plus ``DISABLE_TELEMETRY``, ``DISABLE_AUTOUPDATER``
  and ``DISABLE_ERROR_REPORTING``.

``trap_url`` additionally points ``HTTP(S)_PROXY`` at a local listener that
records and refuses every connection (``NO_PROXY=127.0.0.1,localhost``), so a
call that slipped through would be seen rather than sent. Claude Code skips
its ``HEAD /`` probe of ``ANTHROPIC_BASE_URL`` whenever a proxy is set.

Regenerate the request fixtures in ``tests/data/agent_requests`` with::

    python -m tests.agent_clis --out tests/data/agent_requests
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CLI_BIN = REPO / ".venv" / "node" / "node_modules" / ".bin"
CODEX_VERSION = "0.171.0"
CLAUDE_VERSION = "2.1.197"

# A small coding task: the fakes answer it with a shell tool call, then with text.
TASK = "Write a Python function that reverses a list in rev.py, then run a shell command to check it."
CODEX_KEY_ENV = "OFFLOAD_API_KEY"


def cli(name: str) -> str | None:
    """The project-local CLI (``make clis``); never one on PATH, which may be another version."""
    path = CLI_BIN / name
    return str(path) if path.exists() else None


def codex_config(base_url: str, model: str, key_env: str = CODEX_KEY_ENV, extra: str = "") -> str:
    """The ``config.toml`` that points Codex at the proxy (``base_url`` ends in ``/v1``).

    ``extra`` holds more top-level settings (TOML lines).
    """
    return f"""\
{extra}model = "{model}"
model_provider = "offload"
# Non-interactive runs: never ask, run commands without Codex's own sandbox.
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[features]
plugins = false  # no plugin marketplace sync from github.com / chatgpt.com

[analytics]
enabled = false

[model_providers.offload]
name = "offload-router"
base_url = "{base_url}"
wire_api = "responses"
env_key = "{key_env}"
"""


def _base_env(home: Path, trap_url: str | None) -> dict[str, str]:
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "SHELL": "/bin/bash",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "TMPDIR": str(home / "tmp"),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    if trap_url:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            env[name] = trap_url
    return env


def codex_env(
    home: Path, base_url: str, key: str, model: str, trap_url: str | None = None, extra: str = ""
) -> dict[str, str]:
    """Environment for ``codex exec``; writes ``$home/.codex/config.toml``."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(codex_config(base_url, model, extra=extra))
    return {**_base_env(home, trap_url), "CODEX_HOME": str(codex_home), CODEX_KEY_ENV: key}


CLAUDE_OFFLINE = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


def claude_env(
    home: Path, base_url: str, key: str, trap_url: str | None = None, offline: bool = True
) -> dict[str, str]:
    """Environment for ``claude -p``; ``base_url`` is the host root (no ``/v1``)."""
    env = {**_base_env(home, trap_url), "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": key}
    if offline:
        env.update(CLAUDE_OFFLINE)
    return env


def run_codex(
    workdir: Path, env: dict[str, str], prompt: str = TASK, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    exe = cli("codex")
    assert exe, "codex is not installed: make clis"
    return _run([exe, "exec", "--skip-git-repo-check", "--color", "never", prompt], workdir, env, timeout)


def run_claude(
    workdir: Path, env: dict[str, str], prompt: str = TASK, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    exe = cli("claude")
    assert exe, "claude is not installed: make clis"
    # --allowedTools lets the Bash call run without a prompt; --dangerously-skip-permissions
    # is refused when running as root (CI containers) unless IS_SANDBOX=1.
    return _run([exe, "-p", "--allowedTools=Bash", "--output-format", "text", prompt], workdir, env, timeout)


def _run(
    cmd: list[str], workdir: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run in a process group of its own and kill the whole group on timeout: on node < 22
    ``codex`` is a node wrapper whose native child (and its shell commands) would outlive it."""
    proc = subprocess.Popen(
        cmd,
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise subprocess.TimeoutExpired(cmd, timeout, stdout, stderr) from None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # anything the CLI left running in the background
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


# ------------------------------------------------------------- fixtures

HOST = "127.0.0.1:8080"
FAKE_HOME = "/home/user"
FAKE_PROJECT = "/home/user/project"


def sanitize(entry: dict[str, Any], paths: dict[str, str], secrets: list[str]) -> dict[str, Any]:
    """A captured request made committable: keys replaced, temp paths made neutral, port fixed."""
    headers = {k: v for k, v in entry["headers"].items() if k != "content-length"}
    if "host" in headers:
        headers["host"] = HOST
    text = json.dumps(
        {"method": entry["method"], "path": entry["path"], "headers": headers, "body": entry["body"]}
    )
    for secret in secrets:
        text = text.replace(secret, "sk-placeholder")
    # Longest first, so that a project under HOME becomes FAKE_PROJECT and not FAKE_HOME/...
    for real, fake in sorted(paths.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(real, fake)
    text = re.sub(r"127\.0\.0\.1:\d+", HOST, text)
    return json.loads(text)


def _seed_project(workdir: Path) -> None:
    """A small git repository, like the one an agent usually starts in."""
    workdir.mkdir(parents=True)
    (workdir / "README.md").write_text("# scratch\n\nA scratch project for list helpers.\n")
    git_env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "dev",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "dev",
        "GIT_COMMITTER_EMAIL": "dev@example.com",
        "GIT_CONFIG_GLOBAL": "/dev/null",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "README.md"], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=workdir, env=git_env, check=True)


def capture(out_dir: Path) -> None:
    """Run both CLIs against the recording server and write the request fixtures."""
    from tests.recording_server import start_in_thread

    out_dir.mkdir(parents=True, exist_ok=True)
    key = "sk-capture-0123456789abcdef"
    codex_client = f"codex-cli {CODEX_VERSION} (codex exec, custom provider, model %r)"
    claude_client = f"claude-code {CLAUDE_VERSION} (claude -p)"
    # (run, CLI, model, {fixture: (which request, note)}); "run" names what differs.
    runs: list[tuple[str, str, str | None, dict[str, tuple[Any, str]]]] = [
        (
            "plain",
            "codex",
            "auto",
            {
                "codex_task.json": (_nth("/v1/responses", 0), "first request of a coding task"),
                "codex_tool_result.json": (
                    _nth("/v1/responses", 1),
                    "the follow-up carrying the shell tool's output (TOOL-OK-42)",
                ),
            },
        ),
        (
            "plain",
            "codex",
            "gpt-5.5",
            {
                "codex_gpt55_task.json": (
                    _nth("/v1/responses", 0),
                    "first request of a coding task, for a model Codex knows: the tools and fields change",
                )
            },
        ),
        (
            "compact",
            "codex",
            "auto",
            {
                "codex_chore_compaction.json": (
                    _compaction,
                    "history compaction (over model_auto_compact_token_limit): a plain Responses call, no tools",
                )
            },
        ),
        (
            "plain",
            "claude",
            None,
            {
                "claude_task.json": (_nth("/v1/messages", 0), "first request of a coding task"),
                "claude_tool_result.json": (
                    _nth("/v1/messages", 1),
                    "the follow-up carrying the Bash tool's output (TOOL-OK-42)",
                ),
            },
        ),
        (
            "chores",
            "claude",
            None,
            {
                "claude_chore_title.json": (
                    _title,
                    "session title generation; sent only without CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
                )
            },
        ),
    ]
    for run, kind, model, fixtures in runs:
        server = start_in_thread()
        try:
            with tempfile.TemporaryDirectory() as tmp:
                home, workdir = Path(tmp) / "home", Path(tmp) / "project"
                home.mkdir()
                _seed_project(workdir)
                paths = {str(workdir): FAKE_PROJECT, str(home): FAKE_HOME, tmp: "/tmp/capture"}
                if kind == "codex":
                    extra = ""
                    if run == "compact":
                        extra = "model_auto_compact_token_limit = 20000\n"
                        server.recorder.input_tokens = [50000]  # the first answer is over the limit
                    env = codex_env(home, server.url + "/v1", key, model or "auto", server.trap_url, extra)
                    proc = run_codex(workdir, env)
                    client = codex_client % model
                else:
                    # The chores are only sent when non-essential traffic is allowed: that run goes
                    # through the trap, which refuses its calls to api.anthropic.com.
                    env = claude_env(
                        home, server.url, key, trap_url=server.trap_url, offline=(run != "chores")
                    )
                    proc = run_claude(workdir, env)
                    client = claude_client
                if proc.returncode != 0:
                    raise SystemExit(f"{kind} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
                for name, (pick, note) in fixtures.items():
                    doc = {"client": client, "note": note, **sanitize(pick(server.requests), paths, [key])}
                    (out_dir / name).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
                    print("wrote", name)
                if server.recorder.trapped:
                    print(f"{kind} {run}: refused by the trap: {server.recorder.trapped}")
        finally:
            server.stop()


def _posts(requests: list[dict[str, Any]], path: str) -> list[dict[str, Any]]:
    return [r for r in requests if r["method"] == "POST" and r["path"].split("?")[0] == path]


def _nth(path: str, n: int) -> Any:
    """The n-th agent turn (a request offering tools) to ``path``."""
    return lambda requests: [r for r in _posts(requests, path) if r["body"].get("tools")][n]


def _compaction(requests: list[dict[str, Any]]) -> dict[str, Any]:
    return next(
        r for r in _posts(requests, "/v1/responses") if "COMPACTION" in json.dumps(r["body"]["input"][-1])
    )


def _title(requests: list[dict[str, Any]]) -> dict[str, Any]:
    return next(
        r
        for r in _posts(requests, "/v1/messages")
        if not r["body"].get("tools") and "title" in json.dumps(r["body"].get("system"))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="Capture what the real agent CLIs send, as fixtures")
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "agent_requests")
    capture(parser.parse_args().out)


if __name__ == "__main__":
    main()
