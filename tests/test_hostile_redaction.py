"""Issue 13, item 5: credentials in backend URLs never leave the process.

``http://user:pass@host`` in a backend's URL must not appear in the unauthenticated
``/readyz``, in ``/offload/state`` or in any log line, through the real proxy.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from router.redact import redact_url, redact_urls
from tests.harness import CLOUD_MODEL, LOCAL_MODEL, USER, ProxyServer, free_port, wait_until

PASSWORD = "s3cret-pass-7f1d"
TOKEN = "tok-9a8b7c6d5e"
QUERY_KEY = "qk-0123abcd"


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage() + repr(record.args))


@pytest.fixture
def logs() -> Iterator[Lines]:
    handler = Lines()
    logger = logging.getLogger("offload")
    saved = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(saved)


def test_redact_url_keeps_the_host_and_drops_every_credential() -> None:
    assert redact_url(f"http://user:{PASSWORD}@spark:8000/v1") == "http://user:<redacted>@spark:8000/v1"
    assert redact_url(f"https://{TOKEN}@api.example.com/v1") == "https://<redacted>@api.example.com/v1"
    assert redact_url(f"http://u:p@ss{PASSWORD}@h/v1") == "http://u:<redacted>@h/v1"  # '@' in the password
    assert redact_url(f"https://h/v1?api_key={QUERY_KEY}&x=1") == "https://h/v1?api_key=<redacted>&x=1"
    assert redact_url("http://spark:8000/v1") == "http://spark:8000/v1"
    assert (
        redact_urls(f"a http://a:{PASSWORD}@b/ and mail@example.com")
        == "a http://a:<redacted>@b/ and mail@example.com"
    )


def test_backend_url_credentials_leak_nowhere(local_fake, cloud_fake, logs: Lines) -> None:
    dead = free_port()  # a second local endpoint that is down: its probe logs its URL
    local_url = local_fake.url.replace("http://", f"http://offload:{PASSWORD}@")
    cloud_url = cloud_fake.url.replace("http://", f"http://{TOKEN}@") + f"?api_key={QUERY_KEY}"
    from router.config import parse_config

    config = parse_config(
        {
            "database": {"enabled": False},
            "backends": {
                "local": {
                    "kind": "vllm",
                    "endpoints": [local_url, f"http://offload:{PASSWORD}@127.0.0.1:{dead}/v1"],
                    "model": LOCAL_MODEL,
                },
                "cloud": {  # a token in the URL is the key (Basic): no api_key beside it
                    "kind": "openai",
                    "base_url": cloud_url,
                    "model": CLOUD_MODEL,
                },
            },
            "routing": {"default": "local", "fallbacks": {"local": ["cloud"]}},
            "health": {"interval_s": 0.1, "open_s": 0.2, "failure_threshold": 1, "probe_cloud": True},
        },
        env={},
    )
    server = ProxyServer(config)
    try:
        assert wait_until(lambda: any("is down" in line for line in logs.lines), 10), logs.lines
        served = server.post("/v1/chat/completions", json={"model": "local", "messages": USER})
        assert served.status_code == 200
        ready = server.get("/readyz")
        state = server.get("/offload/state")  # an open proxy: everyone is admin (loopback only)
        assert ready.status_code == 200 and state.status_code == 200
    finally:
        server.stop()
    for where, text in (
        ("/readyz", ready.text),
        ("/offload/state", state.text),
        ("logs", "\n".join(logs.lines)),
    ):
        for secret in (PASSWORD, TOKEN, QUERY_KEY):
            assert secret not in text, f"{secret} in {where}"
    assert "offload:<redacted>@127.0.0.1" in ready.text and "<redacted>@127.0.0.1" in "\n".join(logs.lines)
