"""No secret in any log line, error body, metric, admin answer or usage row.

Traffic of every kind (successes, streams, upstream errors, bad keys,
fallbacks, a dead backend, a stream cut mid-way) runs with recognisable
secrets: two backend keys, a client key and an admin key. Everything the proxy
says or writes is collected (all loggers at DEBUG, uvicorn's and aiohttp's
included; stdout/stderr; every response body and header; /metrics, /readyz,
/offload/state; every usage row) and searched for each secret, and for a
any 8 characters of it in a row, so a truncated or partly masked leak counts too.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from router.config import parse_config
from router.fake.upstream import RunningFake, start_in_thread
from tests.conftest import fake_config, fake_state
from tests.harness import USER, MemoryRecorder, ProxyServer, free_port, wait_until

CLOUD_KEY = "sk-proj-CLOUDSECRETa1b2c3d4e5f6"
LOCAL_KEY = "vllm-LOCALSECRETf00dfeed"
DEAD_KEY = "sk-DEADSECRET99887766"
CLIENT_KEY = "offl-CLIENTSECRET0123abcd"
ADMIN_KEY = "offl-ADMINSECRET4567ef01"
SECRETS = {
    CLOUD_KEY: "CLOUDSECRET",
    LOCAL_KEY: "LOCALSECRET",
    DEAD_KEY: "DEADSECRET",
    CLIENT_KEY: "CLIENTSECRET",
    ADMIN_KEY: "ADMINSECRET",
}


class Everything(logging.Handler):
    """Keeps every record, formatted, with its traceback and raw arguments."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))
        self.lines.append(repr(record.args))
        self.lines.append(repr(record.__dict__))


@pytest.fixture
def fakes() -> Iterator[tuple[RunningFake, RunningFake]]:
    local = start_in_thread("vllm", api_key=LOCAL_KEY, model="poolside/Laguna-S-2.1-NVFP4")
    cloud = start_in_thread("cloud", api_key=CLOUD_KEY, model="gpt-5.1")
    yield local, cloud
    local.stop()
    cloud.stop()


@pytest.fixture
def capture() -> Iterator[Everything]:
    """Every logger at DEBUG into one handler, including those that do not propagate.

    Call ``capture.hook()`` again once the server exists: uvicorn's start-up
    configures its own loggers (level WARNING, no propagation) afresh.
    """
    handler = Everything()
    saved: dict[str, int] = {}

    def hook() -> None:
        names = {"", "uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi", "aiohttp", "asyncio"}
        names |= set(logging.root.manager.loggerDict)
        for name in sorted(names):
            logger = logging.getLogger(name)
            saved.setdefault(name, logger.level)
            logger.setLevel(logging.DEBUG)
            if handler not in logger.handlers:
                logger.addHandler(handler)

    hook()
    handler.hook = hook  # type: ignore[attr-defined]
    yield handler
    for name, level in saved.items():
        logging.getLogger(name).removeHandler(handler)
        logging.getLogger(name).setLevel(level)


def make_server(local: RunningFake, cloud: RunningFake, recorder: MemoryRecorder) -> ProxyServer:
    raw: dict[str, Any] = {
        "database": {"enabled": False},
        "auth": {
            "keys": [{"name": "ci-bot", "key": "${CLIENT_KEY}", "requests_per_minute": 1000}],
            "admin_keys": [{"name": "ops", "key": "${ADMIN_KEY}"}],
        },
        "backends": {
            "local": {
                "kind": "vllm",
                "base_url": local.url,
                "model": "poolside/Laguna-S-2.1-NVFP4",
                "api_key": "${LOCAL_KEY}",
            },
            "cloud": {
                "kind": "openai",
                "base_url": cloud.url,
                "model": "gpt-5.1",
                "api_key": "${CLOUD_KEY}",
                "embeddings_model": "text-embedding-3-small",
            },
            "dead": {
                "kind": "openai",
                "route": "cloud",
                "base_url": f"http://127.0.0.1:{free_port()}/v1",
                "model": "gpt-5.1",
                "api_key": "${DEAD_KEY}",
            },
        },
        "routing": {"default": "local", "fallbacks": {"local": ["cloud"], "dead": ["cloud"]}},
        "health": {"interval_s": 0.2, "open_s": 0.5, "failure_threshold": 2},
    }
    env = {"CLIENT_KEY": CLIENT_KEY, "ADMIN_KEY": ADMIN_KEY, "LOCAL_KEY": LOCAL_KEY, "CLOUD_KEY": CLOUD_KEY}
    env["DEAD_KEY"] = DEAD_KEY
    return ProxyServer(parse_config(raw, env=env), recorder=recorder)  # type: ignore[arg-type]


def test_no_secret_anywhere(fakes, capture, capfd):
    local, cloud = fakes
    recorder = MemoryRecorder()
    server = make_server(local, cloud, recorder)
    capture.hook()
    said: list[str] = []  # everything the proxy answered

    def keep(response: httpx.Response) -> httpx.Response:
        said.append(f"{response.status_code} {dict(response.headers)} {response.text}")
        return response

    def chat(payload: dict[str, Any], key: str | None = CLIENT_KEY, **headers: str) -> httpx.Response:
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        return keep(server.post("/v1/chat/completions", json=payload, headers=headers))

    def stream(payload: dict[str, Any], **headers: str) -> str:
        headers["Authorization"] = f"Bearer {CLIENT_KEY}"
        with httpx.stream(
            "POST", server.base_url + "/chat/completions", json={**payload, "stream": True}, headers=headers
        ) as response:
            text = response.read().decode()
        said.append(f"{response.status_code} {dict(response.headers)} {text}")
        return text

    try:
        # Successes, plain and streamed, on both routes and every endpoint.
        assert chat({"model": "local", "messages": USER}).status_code == 200
        assert chat({"model": "cloud", "messages": USER}).status_code == 200
        assert stream({"model": "local", "messages": USER}).endswith("data: [DONE]\n\n")
        assert stream({"model": "cloud", "messages": USER, "stream_options": {"include_usage": True}})
        auth = {"Authorization": f"Bearer {CLIENT_KEY}"}
        assert keep(
            server.post("/v1/completions", json={"model": "local", "prompt": "x"}, headers=auth)
        ).is_success
        assert keep(server.post("/v1/embeddings", json={"input": ["a"]}, headers=auth)).is_success
        assert keep(server.get("/v1/models", headers=auth)).is_success
        assert keep(server.post("/offload/route", json={"messages": USER}, headers=auth)).is_success

        # Bad keys, in every shape a client gets wrong.
        assert chat({"model": "local", "messages": USER}, key=None).status_code == 401
        assert chat({"model": "local", "messages": USER}, key="wrong").status_code == 401
        assert chat({"model": "local", "messages": USER}, key=CLOUD_KEY).status_code == 401
        assert chat({"model": "local", "messages": USER}, key=CLIENT_KEY + "x").status_code == 401
        for value in (
            CLIENT_KEY,  # no scheme
            f"Basic {base64.b64encode(f'user:{CLIENT_KEY}'.encode()).decode()}",
            f"Token {ADMIN_KEY}",
        ):
            keep(
                server.post("/v1/chat/completions", json={"messages": USER}, headers={"Authorization": value})
            )
        twice = [("Authorization", f"Bearer {CLIENT_KEY}"), ("Authorization", f"Bearer {ADMIN_KEY}")]
        assert (
            keep(server.post("/v1/chat/completions", json={"messages": USER}, headers=twice)).status_code
            == 400
        )
        assert keep(server.get("/offload/state", headers=auth)).status_code == 403
        admin = keep(server.get("/offload/state", headers={"Authorization": f"Bearer {ADMIN_KEY}"}))
        assert admin.status_code == 200

        # Upstream errors, relayed.
        for status in (400, 429, 500):
            fake_config(cloud, fail_status=status, fail_count=1)
            assert chat({"model": "cloud", "messages": USER}).status_code == status
        cloud.fake.api_key = "some-other-key"  # the cloud now refuses our key: its 401 is relayed
        assert chat({"model": "cloud", "messages": USER}).status_code == 401
        local.fake.api_key = "some-other-key"  # vLLM's non-object 401 body, normalised
        assert chat({"model": "local", "messages": USER}).status_code == 401
        cloud.fake.api_key, local.fake.api_key = CLOUD_KEY, LOCAL_KEY

        # Fallbacks: local answers 503; a backend that is not there at all.
        fake_config(local, fail_status=503, fail_count=1)
        fell = chat({"model": "local", "messages": USER})
        assert fell.status_code == 200 and fell.headers["x-offload-fallback"] == "1"
        dead = chat({"model": "dead", "messages": USER})
        assert dead.status_code == 200 and dead.headers["x-offload-route"] == "cloud"
        # A stream whose upstream dies mid-way: error event, then [DONE].
        fake_config(local, die_after_chunks=3)
        assert '"error"' in stream({"model": "local", "messages": USER})
        fake_config(local, die_after_chunks=-1)
        # Malformed bodies and unknown paths.
        keep(server.post("/v1/chat/completions", content=b"{nope", headers=auth))
        keep(server.post("/v1/nothing", json={}, headers=auth))

        assert wait_until(lambda: len(recorder.rows) >= 14)  # every forwarded request
        surfaces = {
            "metrics": keep(server.get("/metrics")).text,
            "readyz": keep(server.get("/readyz")).text,
            "state": admin.text,
        }
    finally:
        server.stop()

    out, err = capfd.readouterr()
    rows = [json.dumps(dataclasses.asdict(r), default=str) for r in recorder.rows]
    everything = {
        "logs": "\n".join(capture.lines),
        "stdout": out,
        "stderr": err,
        "responses": "\n".join(said),
        "rows": "\n".join(rows),
        **surfaces,
    }
    loggers = {line.split(" ")[0] for line in capture.lines}
    assert {"uvicorn.access", "uvicorn.error"} <= loggers, f"the log capture missed the proxy: {loggers}"
    assert rows and "ci-bot" in everything["rows"]  # rows name the key, never hold it
    assert "offload_requests_total" in surfaces["metrics"]
    for secret, name in SECRETS.items():
        # Any 8 characters in a row of a secret: a truncated or masked echo counts as a leak.
        pieces = {secret[i : i + 8] for i in range(len(secret) - 7)}
        for where, text in everything.items():
            leaked = sorted(p for p in pieces if p in text)
            assert not leaked, f"part of the {name} key leaked into {where}: {leaked}"

    # And upstreams only ever saw their own key, never the client's.
    for fake, own in ((local, LOCAL_KEY), (cloud, CLOUD_KEY)):
        seen = json.dumps(fake_state(fake)["received"])
        assert CLIENT_KEY not in seen and ADMIN_KEY not in seen
        assert all(r["headers"].get("authorization") == f"Bearer {own}" for r in fake_state(fake)["received"])
