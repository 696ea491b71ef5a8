from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from router.fake.upstream import RunningFake, start_in_thread
from tests.harness import CLOUD_KEY, CLOUD_MODEL, LOCAL_MODEL, ProxyServer, make_config

PG_URL = os.environ.get("OFFLOAD_TEST_POSTGRES_URL")


@pytest.fixture
def local_fake() -> Iterator[RunningFake]:
    fake = start_in_thread("vllm", model=LOCAL_MODEL)
    yield fake
    fake.stop()


@pytest.fixture
def cloud_fake() -> Iterator[RunningFake]:
    fake = start_in_thread("cloud", api_key=CLOUD_KEY, model=CLOUD_MODEL)
    yield fake
    fake.stop()


@pytest.fixture
def anthropic_fake() -> Iterator[RunningFake]:
    """Anthropic's cloud: Messages only; clients use ``anthropic_fake.root`` as the base URL."""
    fake = start_in_thread("anthropic", api_key="sk-ant-cloud-secret-0123456789", model="claude-sonnet-4-6")
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


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL schema per test (search_path), dropped afterwards."""
    if not PG_URL:
        pytest.skip("PostgreSQL tests need OFFLOAD_TEST_POSTGRES_URL=postgresql+psycopg://...")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(PG_URL, poolclass=NullPool)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = sa.make_url(PG_URL).update_query_dict({"options": f"-csearch_path={schema}"})
    yield url.render_as_string(hide_password=False)
    with admin.begin() as conn:
        conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/usage.db"
    return request.getfixturevalue("pg_url")
