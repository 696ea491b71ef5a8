"""Which config a command reads, ``offload init``, and the import-name check, from the checkout.

The same, run from an installed wheel, is tests/test_install.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import yaml

from router.config import load_config
from router.ops.cli import main

ROOT = Path(__file__).resolve().parent.parent
INTENTS = ("coding", "tools", "instruction", "math", "reasoning", "writing")


def _write_config(path: Path, backend: str) -> Path:
    """A config whose only backend is named ``backend``: every decision names where it came from."""
    raw = {
        "backends": {backend: {"kind": "vllm", "base_url": "http://127.0.0.1:9/v1", "model": "m"}},
        "routing": {"default": backend, "intents": dict.fromkeys(INTENTS, backend)},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(raw))
    return path


def _classify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["classify", *args, "fix this test"])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory outside the checkout, with no OFFLOAD_CONFIG."""
    monkeypatch.delenv("OFFLOAD_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_flag_then_environment_then_working_directory(
    elsewhere: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_config(elsewhere / "config" / "router.yaml", "here")
    env_file = _write_config(elsewhere / "env.yaml", "from_env")
    flag_file = _write_config(elsewhere / "flag.yaml", "from_flag")

    def backend(*args: str) -> str:
        code, out, err = _classify(capsys, *args)
        assert code == 0, err
        return str(orjson.loads(out)["backend"])

    assert backend() == "here"
    monkeypatch.setenv("OFFLOAD_CONFIG", str(env_file))
    assert backend() == "from_env"
    assert backend("--config", str(flag_file)) == "from_flag"


def test_no_config_is_one_line_that_says_how_to_get_one(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _classify(capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    for hint in ("--config", "OFFLOAD_CONFIG", "offload init"):
        assert hint in err


def test_a_named_config_that_is_missing_is_named(
    elsewhere: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_config(elsewhere / "config" / "router.yaml", "here")  # not a fallback for a named file
    monkeypatch.setenv("OFFLOAD_CONFIG", str(elsewhere / "typo.yaml"))
    code, _out, err = _classify(capsys)
    assert code == 2 and "typo.yaml" in err and len(err.strip().splitlines()) == 1


def test_init_writes_the_defaults_and_the_discovery_finds_them(
    elsewhere: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = elsewhere / "proxy"
    assert main(["init", "--dir", str(target)]) == 0
    assert "offload serve" in capsys.readouterr().out
    written = target / "config" / "router.yaml"
    assert written.read_bytes() == (ROOT / "config" / "router.yaml").read_bytes()
    # The recipe it names was written beside it: the limits come from there.
    assert load_config(written).backends["local"].max_concurrency == 32
    env = target / ".env"
    assert env.stat().st_mode & 0o777 == 0o600
    lines = env.read_text().splitlines()
    assert {"OPENAI_API_KEY=", "OFFLOAD_API_KEY=", "OFFLOAD_ADMIN_KEY="} <= set(lines)
    assert "# OFFLOAD_PORT=8080" in lines  # a setting, at the config's default

    monkeypatch.chdir(target)
    code, out, err = _classify(capsys)
    assert code == 0, err
    assert orjson.loads(out)["route"] == "local"


def test_init_refuses_to_overwrite_without_force(elsewhere: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = elsewhere / ".env"
    env.write_text("OPENAI_API_KEY=sk-mine\n")
    assert main(["init"]) == 2
    err = capsys.readouterr().err
    assert ".env" in err and "--force" in err and len(err.strip().splitlines()) == 1
    assert env.read_text() == "OPENAI_API_KEY=sk-mine\n"
    assert not (elsewhere / "config").exists()  # all or nothing
    assert main(["init", "--force"]) == 0
    assert "OPENAI_API_KEY=\n" in env.read_text()
    assert (elsewhere / "config" / "router.yaml").is_file()


def test_init_force_replaces_a_symlinked_env_and_leaves_its_target_alone(
    elsewhere: Path, tmp_path: Path
) -> None:
    """A .env that is a symlink (to a shared secrets file, or planted) is replaced by a new
    private file: --force never writes through the link."""
    target = tmp_path / "secrets-of-another-program"
    target.write_text("DATABASE_PASSWORD=keep-me\n")
    target.chmod(0o644)
    env = elsewhere / ".env"
    env.symlink_to(target)
    assert main(["init", "--force"]) == 0
    assert target.read_text() == "DATABASE_PASSWORD=keep-me\n"
    assert target.stat().st_mode & 0o777 == 0o644
    assert not env.is_symlink() and env.stat().st_mode & 0o777 == 0o600
    assert "OPENAI_API_KEY=" in env.read_text().splitlines()
    assert not [p for p in elsewhere.iterdir() if p.name.endswith(".tmp")]


def test_a_classifier_elsewhere_on_the_path_stops_every_command(tmp_path: Path) -> None:
    """`python -m` puts the working directory first on sys.path: its classifier/ shadows ours."""
    (tmp_path / "classifier").mkdir()
    (tmp_path / "classifier" / "__init__.py").write_text("")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "router.ops.cli",
            "classify",
            "--config",
            str(ROOT / "config" / "router.yaml"),
            "x",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "'classifier'" in out.stderr and str(tmp_path / "classifier") in out.stderr
