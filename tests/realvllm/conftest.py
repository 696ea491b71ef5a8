"""Fixtures of the real-vLLM tier: one vLLM for the tier, proxies in front of it.

Package-scoped: the server starts with the tier's first test and stops after its last,
so the rest of the suite does not share the 2 cores with an idle vLLM.

Every test under ``tests/realvllm`` carries the ``realvllm`` marker (``pytest -m
realvllm`` runs the tier alone, ``-m 'not realvllm'`` leaves it out). Without the CPU
build (``make vllm``) the tier is skipped with one line, except under ``CI=true``,
where it fails: CI must never pass by skipping it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from router.fake.upstream import RunningFake, start_in_thread
from router.forward import vllm_metrics
from tests.harness import CLOUD_KEY, CLOUD_MODEL, ProxyServer, make_config
from tests.realvllm.server import MODEL_NAME, Fleet, VllmServer, recipe, tiny_model, vllm_python

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.realvllm)


@pytest.fixture(scope="package")
def vllm_fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    """Every real vLLM of the tier (started on demand, stopped after its last test)."""
    python, why = vllm_python()
    if python is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"real-vLLM tier: {why} (CI must run it)", pytrace=False)
        pytest.skip(f"real-vLLM tier: {why}")
    fleet = Fleet(python, tiny_model(python), tmp_path_factory.mktemp("vllm"))
    yield fleet
    fleet.stop()


@pytest.fixture(scope="package")
def vllm(vllm_fleet: Fleet) -> VllmServer:
    """The tier's one real vLLM (``vllm_fleet.servers(2)`` gives a second box next to it)."""
    return vllm_fleet.servers(1)[0]


@pytest.fixture(scope="package")
def block_size(vllm: VllmServer) -> int:
    """Tokens per KV-cache block (vllm:cache_config_info): prefix hits come in whole blocks."""
    size = vllm_metrics.parse(vllm.metrics()).block_size
    assert size, "vllm:cache_config_info has no block_size"
    return size


@pytest.fixture(scope="package")
def tier_cloud() -> Iterator[RunningFake]:
    fake = start_in_thread("cloud", api_key=CLOUD_KEY, model=CLOUD_MODEL)
    yield fake
    fake.stop()


def real_config(vllm_url: str, cloud_url: str, local: dict[str, Any] | None = None, **overrides: Any) -> Any:
    """The Spark's local backend (thinking off by default) on the real vLLM, the fake cloud
    as its fallback; ``local`` changes that backend. The context window is the recipe's
    max-model-len, as with ``recipe:``."""
    config = make_config(vllm_url, cloud_url, **overrides)
    the_recipe = recipe()
    limits = {"model": MODEL_NAME, "max_concurrency": the_recipe.max_num_seqs,
              "context_window": the_recipe.max_model_len}  # fmt: skip
    backend = config.backends["local"].model_copy(update={**limits, **(local or {})})
    return config.model_copy(update={"backends": {**config.backends, "local": backend}})


@pytest.fixture(scope="package")
def real_proxy(vllm: VllmServer, tier_cloud: RunningFake) -> Iterator[ProxyServer]:
    """The proxy in front of the real vLLM. Its rows accumulate: tests find theirs by
    the ``x-request-id`` the proxy answers with."""
    server = ProxyServer(real_config(vllm.url, tier_cloud.url))
    yield server
    server.stop()
