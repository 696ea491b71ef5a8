"""The wheel works outside the checkout.

The project is built as a user gets it (an sdist, then the wheel from that sdist),
installed into a clean virtualenv in a temporary directory, and run from another
directory: ``offload init``, ``classify``, ``db upgrade``, ``serve`` (answering
``/readyz`` and a request) and ``report``. The wheel's contents are checked too: no
training corpus, no top-level ``migrations`` or ``config`` package, every package of
the checkout. Dependencies come from the package index: the only reason to skip is
that it cannot be reached.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import orjson
import pytest

ROOT = Path(__file__).resolve().parent.parent
# What pip says when it cannot reach an index: a reason to skip, not a failure.
_NETWORK_TROUBLE = (
    "NewConnectionError",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Could not fetch URL",
    "ProxyError",
    "ConnectTimeoutError",
    "Read timed out",
)
# Not copied into the build: the virtualenv, build output, caches, local databases.
_NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "node_modules",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    ".hypothesis",
    "*.db",
    "*.db-*",
    "*.spool*",
)


@dataclass(frozen=True)
class Installed:
    src: Path  # the copy of the checkout it was built from
    wheel: Path
    sdist: Path | None
    bin: Path
    tmp: Path

    def run(
        self, *args: str, cwd: Path, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / "offload"), *args],
            cwd=cwd,
            env=_clean_env(env),
            capture_output=True,
            text=True,
            timeout=120,
        )


def _clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment minus anything of the checkout's: its venv, its config, its keys."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("OFFLOAD_")}
    return {**env, **(extra or {})}


def _pip_or_skip(cmd: list[str], what: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(cmd, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        text = out.stdout + out.stderr
        if any(marker in text for marker in _NETWORK_TROUBLE):
            pytest.skip(
                f"{what}: the package index cannot be reached ({text.strip().splitlines()[-1][:160]})"
            )
        pytest.fail(f"{what} failed:\n{text[-4000:]}")
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=_NOT_SOURCE)  # never build in (and write to) the shared checkout
    dist = tmp / "dist"
    if importlib.util.find_spec("build"):
        _pip_or_skip([sys.executable, "-m", "build", "--outdir", str(dist), str(src)], "python -m build", tmp)
        sdist: Path | None = next(dist.glob("*.tar.gz"))
    else:  # the dev extra brings `build`; without it, the wheel alone
        cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(src)]
        _pip_or_skip(cmd, "pip wheel", tmp)
        sdist = None
    wheel = next(dist.glob("*.whl"))
    venv = tmp / "venv"
    made = subprocess.run(
        [sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=120
    )
    if made.returncode != 0 and "ensurepip" in made.stdout + made.stderr:
        pytest.skip(f"python -m venv cannot install pip here: {made.stdout.strip()[:160]}")
    assert made.returncode == 0, made.stdout + made.stderr
    _pip_or_skip([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], "pip install", tmp)
    return Installed(src=src, wheel=wheel, sdist=sdist, bin=venv / "bin", tmp=tmp)


@pytest.fixture
def workdir(installed: Installed, tmp_path: Path) -> Path:
    """A directory outside the checkout and outside the venv."""
    assert not tmp_path.is_relative_to(ROOT)
    return tmp_path


# ------------------------------------------------------------------- contents


def _checkout_modules(src: Path) -> set[str]:
    """Every module of the checkout that serving needs (not the training corpus): each
    subpackage's ``__init__.py`` and every module in it, the simulated upstream included
    (``offload demo`` runs it)."""
    found = set()
    for top in ("router", "classifier"):
        for module in (src / top).rglob("*.py"):
            rel = module.relative_to(src).as_posix()
            if not rel.startswith("classifier/data/"):
                found.add(rel)
    return found


def test_wheel_carries_what_serving_needs_and_nothing_else(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    top_level = {n.split("/")[0] for n in names if ".dist-info/" not in n}
    assert top_level == {"router", "classifier"}  # no top-level migrations or config
    assert not [n for n in names if n.startswith("classifier/data/")]
    assert "classifier/weights/intent.json" in names
    missing = sorted(_checkout_modules(installed.src) - names)
    assert not missing, f"missing from the wheel (pyproject's package list?): {missing}"
    assert "router/fake/upstream.py" in names  # the demo's simulated upstream
    versions = {p.name for p in (installed.src / "migrations" / "versions").glob("*.py")}
    assert {n.rsplit("/", 1)[1] for n in names if n.startswith("router/migrations/versions/")} == versions
    assert {"router/migrations/env.py", "router/migrations/script.py.mako"} <= names
    with zipfile.ZipFile(installed.wheel) as whl:
        # The starter config is the checkout's config/router.yaml, not a copy kept in step.
        assert (
            whl.read("router/starter/router.yaml") == (installed.src / "config" / "router.yaml").read_bytes()
        )
        assert (
            whl.read("router/starter/laguna-spark.yaml")
            == (installed.src / "config" / "laguna-spark.yaml").read_bytes()
        )


def test_sdist_keeps_the_training_material(installed: Installed) -> None:
    if installed.sdist is None:
        pytest.skip(
            "`build` is not installed (pip install -e '.[dev]'): the wheel was built without an sdist"
        )
    with tarfile.open(installed.sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    corpus = {
        p.relative_to(installed.src).as_posix()
        for p in (installed.src / "classifier" / "data").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert corpus and corpus <= names
    assert {"migrations/env.py", "config/spark.yaml", "docs/operations.md", "Makefile"} <= names


# ------------------------------------------------------------- from elsewhere


def test_no_config_is_one_line_that_says_how_to_get_one(installed: Installed, workdir: Path) -> None:
    out = installed.run("classify", "hello", cwd=workdir)
    assert out.returncode == 2
    assert out.stdout == "" and len(out.stderr.strip().splitlines()) == 1, out.stderr
    for hint in ("--config", "OFFLOAD_CONFIG", "offload init"):
        assert hint in out.stderr
    missing = workdir / "nowhere.yaml"
    out = installed.run("db", "upgrade", cwd=workdir, env={"OFFLOAD_CONFIG": str(missing)})
    assert out.returncode == 2 and str(missing) in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_init_classify_migrate_serve_report(installed: Installed, workdir: Path) -> None:
    out = installed.run("init", cwd=workdir)
    assert out.returncode == 0, out.stderr
    config = workdir / "config" / "router.yaml"
    assert config.read_bytes() == (installed.src / "config" / "router.yaml").read_bytes()
    assert (workdir / "config" / "laguna-spark.yaml").is_file()
    env_file = workdir / ".env"
    assert env_file.stat().st_mode & 0o777 == 0o600
    assert "OPENAI_API_KEY=\n" in env_file.read_text()

    config.write_text(config.read_text() + "# mine\n")
    again = installed.run("init", cwd=workdir)
    assert again.returncode == 2 and "--force" in again.stderr and "router.yaml" in again.stderr
    assert config.read_text().endswith("# mine\n")  # refused: nothing overwritten
    assert installed.run("init", "--force", cwd=workdir).returncode == 0
    assert config.read_bytes() == (installed.src / "config" / "router.yaml").read_bytes()

    # With the cloud key set the cloud serves it; unset, the box would (classify says which).
    keyed = {"OPENAI_API_KEY": "sk-test-0123456789abcdef"}
    out = installed.run("classify", "prove that sqrt 2 is irrational", cwd=workdir, env=keyed)
    assert out.returncode == 0, out.stderr
    decision = orjson.loads(out.stdout)
    assert (decision["intent"], decision["route"], decision["backend"]) == ("math", "cloud", "cloud")

    out = installed.run("db", "upgrade", cwd=workdir)
    assert out.returncode == 0, out.stderr
    assert "database at revision" in out.stdout and (workdir / "offload.db").is_file()

    with _serving(installed, workdir) as base:
        ready = httpx.get(f"{base}/readyz", timeout=5)
        assert ready.status_code == 200, ready.text
        backends = ready.json()["backends"]
        assert backends["local"]["up"] and backends["cloud"]["missing_env"] == "OPENAI_API_KEY"
        body = {"model": "local", "messages": [{"role": "user", "content": "fix this test"}]}
        answer = httpx.post(f"{base}/v1/chat/completions", json=body, timeout=30)
        assert answer.status_code == 200 and answer.headers["x-offload-route"] == "local"

    month = datetime.now(UTC).strftime("%Y-%m")
    out = installed.run("report", "--month", month, "--format", "json", cwd=workdir)
    assert out.returncode == 0, out.stderr
    assert orjson.loads(out.stdout)["requests"] == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _serving(installed: Installed, workdir: Path) -> Iterator[str]:
    """``offload serve`` from the wheel, its local backend a fake vLLM the wheel also ships."""
    port, vllm_port = _free_port(), _free_port()
    python = str(installed.bin / "python")
    fake = subprocess.Popen(
        [python, "-m", "router.fake.upstream", "--port", str(vllm_port), "--mode", "vllm"],
        cwd=workdir,
        env=_clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    env = {"OFFLOAD_PORT": str(port), "OFFLOAD_LOCAL_URL": f"http://127.0.0.1:{vllm_port}/v1"}
    serve = subprocess.Popen(
        [str(installed.bin / "offload"), "serve"],
        cwd=workdir,
        env=_clean_env(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert serve.poll() is None, (
                f"offload serve exited: {serve.stderr.read() if serve.stderr else ''}"
            )
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "offload serve never became ready"
            time.sleep(0.2)
        yield base
    finally:
        serve.send_signal(signal.SIGTERM)  # graceful: the usage row is flushed before it exits
        assert serve.wait(timeout=60) == 0
        fake.terminate()
        fake.wait(timeout=30)


def _wheel_owning(directory: Path, import_name: str, dist: str = "clashing_thing") -> Path:
    """A minimal wheel of another distribution that installs ``import_name/__init__.py``."""
    info = f"{dist}-1.0.dist-info"
    files = {
        f"{import_name}/__init__.py": b"# not offload-router's\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist.replace('_', '-')}\nVersion: 1.0\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
        for name, data in files.items()
    ]
    path = directory / f"{dist}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as whl:
        for name, data in files.items():
            whl.writestr(name, data)
        whl.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return path


def test_a_clashing_import_name_is_one_line_naming_it(installed: Installed, workdir: Path) -> None:
    assert installed.run("init", cwd=workdir).returncode == 0
    # A folder named classifier earlier on sys.path.
    shadow = workdir / "shadow"
    (shadow / "classifier").mkdir(parents=True)
    (shadow / "classifier" / "__init__.py").write_text("")
    out = installed.run("classify", "hello", cwd=workdir, env={"PYTHONPATH": str(shadow)})
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "'classifier'" in out.stderr and str(shadow / "classifier") in out.stderr
    # Another distribution that installs its own classifier over ours.
    pip = [str(installed.bin / "python"), "-m", "pip", "install", "-q", "--no-deps"]
    subprocess.run(
        [*pip, str(_wheel_owning(workdir, "classifier"))], check=True, capture_output=True, timeout=120
    )
    try:
        out = installed.run("classify", "hello", cwd=workdir)
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert "'classifier'" in out.stderr and "clashing-thing 1.0" in out.stderr
    finally:  # leave the venv as the other tests expect it
        uninstall = [str(installed.bin / "python"), "-m", "pip", "uninstall", "-q", "-y", "clashing-thing"]
        subprocess.run(uninstall, check=True, capture_output=True, timeout=120)
        subprocess.run(
            [*pip, "--force-reinstall", str(installed.wheel)], check=True, capture_output=True, timeout=300
        )
    assert installed.run("classify", "hello", cwd=workdir).returncode == 0
