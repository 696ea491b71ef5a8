"""SIGTERM: in-flight requests finish, new connections are refused, rows are written.

The proxy runs as a real ``offload serve`` subprocess with a SQLite database,
so the signal handling, uvicorn's graceful shutdown and the accounting
writer's final flush are the ones production runs.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import CLOUD_KEY, fake_config
from tests.harness import USER, free_port, wait_until

ROOT = Path(__file__).resolve().parent.parent
GRACE_S = 10


def write_config(tmp: Path, local_url: str, cloud_url: str) -> Path:
    config = {
        "server": {"shutdown_grace_s": GRACE_S},
        "database": {
            "url": f"sqlite:///{tmp / 'usage.db'}",
            "spool_path": str(tmp / "spool.jsonl"),
            "flush_interval_s": 0.2,
        },
        "backends": {
            "local": {"kind": "vllm", "base_url": local_url, "model": "poolside/Laguna-S-2.1-NVFP4"},
            "cloud": {"kind": "openai", "base_url": cloud_url, "model": "gpt-5.1", "api_key": CLOUD_KEY},
        },
        "routing": {"default": "local", "fallbacks": {"local": ["cloud"]}},
    }
    path = tmp / "router.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def served(tmp_path: Path, local_fake: Any, cloud_fake: Any) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    port = free_port()
    config = write_config(tmp_path, local_fake.url, cloud_fake.url)
    proc = subprocess.Popen(
        [sys.executable, "-m", "router.ops.cli", "serve", "--config", str(config), "--port", str(port)],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert wait_until(lambda: _healthy(port) or proc.poll() is not None, timeout=30)
        assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def _rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute('SELECT count(*) FROM "usage"').fetchone()[0])


def test_sigterm_drains_in_flight_requests_and_refuses_new_ones(served, local_fake, cloud_fake, tmp_path):
    proc, port = served
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    answered = 0
    for model in ("local", "cloud"):  # warm-up: connections pooled, rows queued
        assert httpx.post(url, json={"model": model, "messages": USER}, timeout=10).status_code == 200
        answered += 1

    # A slow stream on local (~3 s) and slow plain answers on cloud (~2 s).
    fake_config(local_fake, chunk_delay=0.3)
    fake_config(cloud_fake, first_byte_delay=2.0)
    results: dict[str, Any] = {}

    def stream() -> None:
        body = {"model": "local", "messages": USER, "stream": True}
        with httpx.stream("POST", url, json=body, timeout=30) as response:
            results["stream_status"] = response.status_code
            results["stream"] = b"".join(response.iter_bytes())

    def plain(i: int) -> None:
        response = httpx.post(url, json={"model": "cloud", "messages": USER}, timeout=30)
        results[f"plain{i}"] = (response.status_code, response.json())

    threads = [threading.Thread(target=stream)] + [
        threading.Thread(target=plain, args=(i,)) for i in range(3)
    ]
    for thread in threads:
        thread.start()
    state = lambda fake: httpx.get(f"http://127.0.0.1:{fake.port}/_fake/state", timeout=5).json()  # noqa: E731
    assert wait_until(
        lambda: state(local_fake)["active"] == 1 and state(cloud_fake)["active"] == 3, timeout=10
    )
    time.sleep(0.5)  # the stream is flowing: some chunks are already out

    t = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    # New connections are refused while the old ones drain.
    assert wait_until(lambda: not _accepts(port), timeout=3), "still accepting connections after SIGTERM"
    assert state(local_fake)["active"] == 1, "the stream did not survive the signal"

    for thread in threads:
        thread.join(GRACE_S + 5)
    returncode = proc.wait(GRACE_S + 5)
    took = time.monotonic() - t
    output = proc.stdout.read().decode() if proc.stdout else ""

    # Every in-flight request completed: the stream to [DONE] with no error event.
    assert results.get("stream_status") == 200
    body = results["stream"]
    assert body.endswith(b"data: [DONE]\n\n") and b'"error"' not in body, body[-300:]
    text = "".join(
        json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
        for line in body.split(b"\n\n")
        if line.startswith(b"data: {") and json.loads(line[6:])["choices"]
    )
    assert text == "Hello there, I am a fake model."
    for i in range(3):
        status, payload = results[f"plain{i}"]
        assert status == 200 and payload["choices"][0]["message"]["content"]
    answered += 4
    assert took < GRACE_S, f"shutdown took {took:.1f} s, more than the grace period"
    assert "Traceback" not in output, output

    # Accounting flushed on the way out: one row per answered request.
    assert _rows(tmp_path / "usage.db") == answered
    assert not (tmp_path / "spool.jsonl").exists() or (tmp_path / "spool.jsonl").stat().st_size == 0

    # 0, not "killed by SIGTERM" (-15): uvicorn re-raises the signal unless told not to.
    assert returncode == 0, output


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False
