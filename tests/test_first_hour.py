"""What a newcomer meets in the first hour: the starter files, `make serve`'s venv, one-line errors.

The three-backend default config is checked here by what it routes; the README's steps
with the real CLIs and SDKs are run by tests/test_readme.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from router.config import DEFAULT_CONFIG_PATH, ConfigError, env_references, parse_config, read_yaml
from router.forward.backends import Pool
from router.ops.init import planned_files

ROOT = Path(__file__).resolve().parent.parent
OFFLOAD = ROOT / ".venv" / "bin" / "offload"
# Installed only by `make install` / `make test`: never by `make serve`.
TEST_ONLY = ("pytest", "openai", "anthropic", "openai-agents", "schemathesis", "playwright", "mypy", "ruff")


def starter(env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return parse_config(read_yaml(ROOT / DEFAULT_CONFIG_PATH, "config"), env=env or {})


def test_default_config_serves_each_api_from_the_cloud_backend_that_speaks_it() -> None:
    """Cloud-bound Messages go to the Anthropic backend, the OpenAI APIs to the OpenAI one, and
    each falls back to the box, which serves all three; the box falls back to the cloud."""
    config = starter()
    assert {n: b.kind for n, b in config.backends.items()} == {
        "local": "vllm",
        "cloud": "openai",
        "claude": "anthropic",
    }
    pool = Pool(config)
    chain = {
        api: [b.name for b in pool.candidates("cloud", api)] for api in ("chat", "responses", "messages")
    }
    assert chain == {
        "chat": ["cloud", "local"],
        "responses": ["cloud", "local"],
        "messages": ["claude", "local"],
    }
    assert [b.name for b in pool.candidates("local", "messages")] == ["local", "claude"]
    assert [b.name for b in pool.candidates("local", "chat")] == ["local", "cloud"]
    assert config.report.currency == "USD"


def test_init_env_lists_every_variable_and_says_whose_key_is_whose(tmp_path: Path) -> None:
    files = planned_files(tmp_path)
    env = files[tmp_path / ".env"].decode()
    config_text = files[tmp_path / "config" / "router.yaml"].decode()
    refs = env_references(config_text)
    assert {"OFFLOAD_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"} <= set(refs)
    for var, default in refs.items():
        line = f"{var}=" if default is None else f"# {var}={default}"
        assert re.search(rf"^{re.escape(line)}$", env, re.M), var
    # The upstream keys are marked as the proxy's alone.
    assert "never give it to an agent" in env.split("OPENAI_API_KEY=")[0].splitlines()[-1]
    assert "client key" in env.split("OFFLOAD_API_KEY=")[0].splitlines()[-1]


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "/nonexistent/labelled.jsonl"],
        ["classify", "--config", str(ROOT / DEFAULT_CONFIG_PATH), "--batch", "/nonexistent/requests.jsonl"],
        ["train", "--data", "/nonexistent/data.jsonl", "--out", "/tmp/never-written.json"],
    ],
    ids=["eval", "classify", "train"],
)
def test_a_wrong_path_is_one_line_not_a_traceback(args: list[str], tmp_path: Path) -> None:
    done = subprocess.run([str(OFFLOAD), *args], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "/nonexistent/" in lines[0] and "No such file or directory" in lines[0]


def test_a_database_without_a_schema_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        f"database: {{url: 'sqlite:///{tmp_path}/empty.db'}}\n"
        "backends: {local: {kind: vllm, base_url: 'http://127.0.0.1:1/v1', model: m}}\n"
    )
    (tmp_path / "empty.db").write_bytes(b"")
    done = subprocess.run(
        [str(OFFLOAD), "export", "--config", str(config), "--month", "2026-11", "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr


def test_make_serve_installs_the_runtime_only(tmp_path: Path) -> None:
    """`make serve` (its `runtime` prerequisite) builds a venv without any test or lint tool."""
    if shutil.which("make") is None:
        pytest.skip("no make")
    src = tmp_path / "src"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(".git", ".venv", "*.egg-info", "__pycache__", ".*_cache", "*.db"),
    )
    venv = tmp_path / "venv"
    done = subprocess.run(
        ["make", "-C", str(src), "runtime", f"VENV={venv}", f"PYTHON={sys.executable}"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0 and re.search(r"NewConnectionError|name resolution|unreachable", done.stderr):
        pytest.skip("the package index cannot be reached")
    assert done.returncode == 0, done.stdout + done.stderr
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.lower()
    names = {line.split("==")[0].replace("_", "-") for line in listed.splitlines()}
    assert "offload-router" in names
    assert sorted(names & set(TEST_ONLY)) == []
    assert (venv / "bin" / "offload").exists()


def test_the_proxy_refuses_an_upstream_key_equal_to_a_client_key(tmp_path: Path) -> None:
    """The agents' shell and the proxy's shared OPENAI_API_KEY: the proxy would have sent the
    client key to OpenAI. It stops at start-up instead, naming both variables."""
    same = "sk-shared-in-one-shell-0123456789"
    env = {"OFFLOAD_API_KEY": same, "OPENAI_API_KEY": same, "ANTHROPIC_API_KEY": "sk-ant-other-0123456789"}
    with pytest.raises(ConfigError) as caught:
        starter(env)
    message = str(caught.value)
    assert "backends.cloud.api_key (OPENAI_API_KEY)" in message
    assert "auth.keys[0].key (OFFLOAD_API_KEY)" in message
    assert same not in message  # never the key itself
    starter({**env, "OPENAI_API_KEY": "sk-proxy-own-0123456789"})  # apart: fine
    done = subprocess.run(
        [str(OFFLOAD), "serve", "--config", str(ROOT / DEFAULT_CONFIG_PATH)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", **env, "OFFLOAD_PORT": "1"},
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "OPENAI_API_KEY" in lines[0] and "OFFLOAD_API_KEY" in lines[0], done.stderr


def test_the_readme_is_short_and_its_docs_stand_alone() -> None:
    """A newcomer reads the README in ten minutes; everything else is in docs/, linked, and
    no doc points outside the repository."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)\)", readme))
    assert {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")} <= linked
    for doc in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", doc.read_text()):
            if target.startswith(("http://", "https://")):
                continue
            path = (doc.parent / target).resolve()
            assert path.is_relative_to(ROOT) and path.exists(), f"{doc.name}: {target}"
