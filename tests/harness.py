"""Run the real proxy (uvicorn, real sockets) in a background thread for tests."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import httpx
import uvicorn

from router.app import create_app
from router.config import Config, parse_config
from router.edge.state import ProxyState
from router.ledger.writer import UsageRecorder
from router.ops.demo import CLOUD_MODEL, LOCAL_MODEL, simulated_backends

# The cloud's API key, shared by make_config and the conftest fixtures (the models are the demo's).
CLOUD_KEY = "sk-cloud-secret-0123456789"

# A coding request and a shell tool: the traffic of the proxy tests and of bench/soak.py.
USER = [{"role": "user", "content": "write a python function that reverses a list"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "shell",
            "description": "run a shell command",
            "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
        },
    }
]


class MemoryRecorder:
    """Keeps usage rows in memory, so tests can read exactly what the proxy recorded."""

    queue_depth = 0
    rows_spooled = 0

    def __init__(self) -> None:
        self.rows: list[Any] = []

    @property
    def rows_written(self) -> int:
        return len(self.rows)

    async def start(self) -> None:
        return None

    def record(self, row: Any) -> None:
        self.rows.append(row)

    async def stop(self) -> None:
        return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_config(local_url: str, cloud_url: str, **overrides: Any) -> Config:
    """The demo's backends (a vLLM-mode local, a strict cloud) without a database, plus any overrides."""
    raw: dict[str, Any] = {
        "database": {"enabled": False},
        "backends": simulated_backends(local_url, cloud_url, CLOUD_KEY),
        "routing": {"default": "local", "fallbacks": {"local": ["cloud"]}},
        "health": {"interval_s": 0.2, "open_s": 0.5, "failure_threshold": 2},
    }
    for key, value in overrides.items():
        section, _, sub = key.partition("__")
        if sub:
            raw.setdefault(section, {})
            raw[section][sub] = value
        else:
            raw[key] = value
    return parse_config(raw, env={})


class ProxyServer:
    def __init__(
        self,
        config: Config,
        classifier: Any = None,
        recorder: UsageRecorder | None = None,
    ) -> None:
        self.config = config
        self.app = create_app(config, classifier=classifier, recorder=recorder or MemoryRecorder())  # type: ignore[arg-type]
        self.port = free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(
                self.app, host="127.0.0.1", port=self.port, log_level="warning", loop="asyncio", lifespan="on"
            )
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("proxy did not start")
            time.sleep(0.01)

    @property
    def state(self) -> ProxyState:
        """The app's pool, recorder, limits...: what one request needs (router.edge.state.ProxyState)."""
        return self.app.state.proxy

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return httpx.get(self.url + path, timeout=10, **kw)

    def post(self, path: str, **kw: Any) -> httpx.Response:
        return httpx.post(self.url + path, timeout=30, **kw)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)


def sse_events(raw: str) -> list[tuple[str | None, str]]:
    """(event name, data) of each SSE event, as a strict client splits them."""
    events = []
    for chunk in raw.split("\n\n"):
        if not chunk.strip():
            continue
        name, data = None, ""
        for line in chunk.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data = line[len("data: ") :]
        events.append((name, data))
    return events


def wait_until(predicate: Any, timeout: float = 5.0, interval: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


__all__ = [
    "CLOUD_KEY",
    "CLOUD_MODEL",
    "LOCAL_MODEL",
    "TOOLS",
    "USER",
    "MemoryRecorder",
    "ProxyServer",
    "free_port",
    "sse_events",
    "make_config",
    "wait_until",
]
