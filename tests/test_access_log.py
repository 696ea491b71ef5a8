"""The access log: one line per request, what a user needs to see why, never the content."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx
import pytest

from router.config import LoggingConfig
from router.edge.access import JsonFormatter, TextFormatter, configure_logging
from router.fake.upstream import RunningFake
from tests.conftest import fake_config
from tests.harness import CLOUD_KEY, USER, ProxyServer, make_config

SECRET_TEXT = "the-private-prompt-text-4711"
FIELDS = {"request_id", "api", "client", "status", "route", "backend", "latency_ms", "reason", "fallback"}


def _access(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "offload.access"]


def test_one_line_per_request_with_its_fields_and_never_its_content(
    local_fake: RunningFake, cloud_fake: RunningFake, caplog: pytest.LogCaptureFixture
) -> None:
    server = ProxyServer(make_config(local_fake.url, cloud_fake.url, routing={"fallbacks": {}}))
    messages = [{"role": "user", "content": f"write a python function {SECRET_TEXT}"}]
    try:
        with caplog.at_level(logging.INFO, logger="offload.access"):
            ok = server.post("/v1/chat/completions", json={"model": "local", "messages": messages})
            streamed = server.post(
                "/v1/chat/completions", json={"model": "local", "messages": messages, "stream": True}
            )
            fake_config(cloud_fake, fail_status=500)
            failed = server.post("/v1/chat/completions", json={"model": "cloud", "messages": messages})
            refused = httpx.post(server.base_url + "/chat/completions", content=b"{not json", timeout=5)
        assert (ok.status_code, streamed.status_code, failed.status_code, refused.status_code) == (
            200,
            200,
            500,
            400,
        )
        records = _access(caplog)
        assert len(records) == 4
        first, stream, fail, refusal = (r.access for r in records)  # type: ignore[attr-defined]
        assert set(first) >= FIELDS
        assert first["request_id"] == ok.headers["x-request-id"]
        assert (first["api"], first["status"], first["backend"], first["route"]) == (
            "chat",
            200,
            "local",
            "local",
        )
        assert first["prompt_tokens"] > 0 and first["completion_tokens"] == 9
        assert stream["ttft_ms"] is not None and stream["ttft_ms"] <= stream["latency_ms"]
        # A 5xx says what the upstream answered, at warning level.
        assert fail["status"] == 500 and records[2].levelno == logging.WARNING
        assert "cloud answered HTTP 500" in fail["detail"] and fail["backend"] is None
        assert refusal["status"] == 400 and refusal["path"] == "/v1/chat/completions"
        text = "\n".join(TextFormatter().format(r) for r in records) + "\n".join(
            JsonFormatter().format(r) for r in records
        )
        assert SECRET_TEXT not in text and CLOUD_KEY not in text
    finally:
        server.stop()


def test_the_fallback_and_its_reason_are_in_the_line(
    local_fake: RunningFake, cloud_fake: RunningFake, caplog: pytest.LogCaptureFixture
) -> None:
    server = ProxyServer(make_config(local_fake.url, cloud_fake.url))
    try:
        fake_config(local_fake, fail_status=503)
        with caplog.at_level(logging.INFO, logger="offload.access"):
            assert (
                server.post("/v1/chat/completions", json={"model": "local", "messages": USER}).status_code
                == 200
            )
        (line,) = [r.access for r in _access(caplog)]  # type: ignore[attr-defined]
        assert (line["backend"], line["decided"], line["fallback"]) == ("cloud", "local", "http_503")
    finally:
        server.stop()


def test_a_stderr_nobody_reads_never_blocks_a_request(local_fake: RunningFake, tmp_path: Path) -> None:
    """`offload serve` with its stderr a pipe nobody drains (a supervisor that does not read
    it): once the pipe is full, requests still answer; log records are dropped, not waited on."""
    import subprocess
    import sys

    from tests.harness import free_port, wait_until

    port = free_port()
    config = (
        "database: {enabled: false}\n"
        f"backends: {{local: {{kind: vllm, base_url: '{local_fake.url}', model: m}}}}\n"
        "logging: {level: debug}\n"
    )
    (tmp_path / "c.yaml").write_text(config)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "router.ops.cli",
            "serve",
            "--port",
            str(port),
            "--config",
            str(tmp_path / "c.yaml"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,  # never read
        cwd=tmp_path,
    )
    try:
        url = f"http://127.0.0.1:{port}"

        def up() -> bool:
            try:
                return httpx.get(url + "/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        assert wait_until(up, timeout=30)
        with httpx.Client(timeout=10) as client:
            # Far more than a 64 KiB pipe holds of access lines.
            for _ in range(600):
                r = client.post(url + "/v1/chat/completions", json={"model": "local", "messages": USER})
                assert r.status_code == 200
    finally:
        proc.kill()
        proc.wait()


def test_json_format_and_level(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        listener = configure_logging(LoggingConfig(level="WARNING", format="json"))
        logging.getLogger("offload.test").info("hidden below the level")
        logging.getLogger("offload.test").warning("shown")
        listener.stop()  # writes what is queued
        lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
        assert [(x["level"], x["logger"], x["message"]) for x in lines] == [
            ("warning", "offload.test", "shown")
        ]
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        logging.getLogger("offload.access").disabled = False
