"""What the unauthenticated endpoints tell a stranger: /readyz gives states and counts to
anyone (load balancers and probes need them), models and endpoint URLs only to an admin
key or when ``server.public_details`` says so; /metrics and /openapi.json never name a
model or a URL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from router.fake.upstream import RunningFake
from tests.harness import CLOUD_MODEL, LOCAL_MODEL, USER, ProxyServer, make_config

ADMIN = "sk-admin-public-0123456789abcdef"
CLIENT = "sk-client-public-0123456789abcdef"


def _proxy(local: RunningFake, cloud: RunningFake, **server: object) -> ProxyServer:
    auth = {"keys": [{"name": "team", "key": CLIENT}], "admin_keys": [{"name": "ops", "key": ADMIN}]}
    return ProxyServer(make_config(local.url, cloud.url, auth=auth, server=server or {}))


@pytest.fixture
def keyed(local_fake: RunningFake, cloud_fake: RunningFake) -> Iterator[ProxyServer]:
    proxy = _proxy(local_fake, cloud_fake)
    yield proxy
    proxy.stop()


def _revealing(text: str, local: RunningFake, cloud: RunningFake) -> list[str]:
    found = [m for m in (LOCAL_MODEL, CLOUD_MODEL) if m in text]
    return found + [u for u in (f":{local.port}", f":{cloud.port}") if u in text]


def test_a_stranger_sees_states_not_models_or_urls(keyed: ProxyServer, local_fake, cloud_fake) -> None:
    keyed.post(
        "/v1/chat/completions", json={"model": "local", "messages": USER}, headers={"x-api-key": CLIENT}
    )
    for headers in ({}, {"authorization": f"Bearer {CLIENT}"}, {"authorization": "Bearer sk-wrong"}):
        ready = keyed.get("/readyz", headers=headers)
        assert ready.status_code == 200
        local = ready.json()["backends"]["local"]
        assert local["up"] is True and local["endpoints"][0]["breaker"] == "closed"  # what probes need
        assert _revealing(ready.text, local_fake, cloud_fake) == [], headers
    for path in ("/metrics", "/openapi.json"):
        assert _revealing(keyed.get(path).text, local_fake, cloud_fake) == [], path


def test_an_admin_sees_the_details(keyed: ProxyServer, local_fake, cloud_fake) -> None:
    ready = keyed.get("/readyz", headers={"authorization": f"Bearer {ADMIN}"}).json()
    assert ready["backends"]["local"]["model"] == LOCAL_MODEL
    assert ready["backends"]["local"]["endpoints"][0]["url"].endswith(f":{local_fake.port}/v1")


def test_public_details_is_the_operators_choice(local_fake, cloud_fake) -> None:
    proxy = _proxy(local_fake, cloud_fake, public_details=True)
    try:
        assert proxy.get("/readyz").json()["backends"]["cloud"]["model"] == CLOUD_MODEL
    finally:
        proxy.stop()
