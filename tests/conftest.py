from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.fakeupstream import RunningFake, start_in_thread
from tests.harness import ProxyServer, make_config

CLOUD_KEY = "sk-cloud-secret-0123456789"


@pytest.fixture
def local_fake() -> Iterator[RunningFake]:
    fake = start_in_thread("vllm", model="poolside/Laguna-S-2.1-NVFP4")
    yield fake
    fake.stop()


@pytest.fixture
def cloud_fake() -> Iterator[RunningFake]:
    fake = start_in_thread("cloud", api_key=CLOUD_KEY, model="gpt-5.1")
    yield fake
    fake.stop()


@pytest.fixture
def proxy(local_fake: RunningFake, cloud_fake: RunningFake) -> Iterator[ProxyServer]:
    server = ProxyServer(make_config(local_fake.url, cloud_fake.url))
    yield server
    server.stop()


def fake_state(fake: RunningFake) -> dict:
    return httpx.get(f"http://127.0.0.1:{fake.port}/_fake/state", timeout=5).json()


def fake_config(fake: RunningFake, **behaviour: object) -> None:
    httpx.post(f"http://127.0.0.1:{fake.port}/_fake/config", json=behaviour, timeout=5).raise_for_status()
