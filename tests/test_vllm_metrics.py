"""The /metrics families the router reads (router/vllm_metrics.py): a missing or renamed one
is named, logged and shown in /readyz, never read as a quiet 0 ("idle").

``tests/data/vllm_metrics_0.32.txt`` is the real vLLM 0.32 CPU build's text (the real-vLLM
tier checks that the live server still exports every family in it)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from router.fake.upstream import RunningFake
from router.forward import vllm_metrics
from tests.conftest import fake_config
from tests.harness import ProxyServer, make_config, wait_until

REAL_032 = (Path(__file__).parent / "data" / "vllm_metrics_0.32.txt").read_text()


def test_the_real_032_text_has_every_family_the_router_reads() -> None:
    metrics = vllm_metrics.parse(REAL_032)
    assert metrics.missing == ()
    assert set(metrics.load) == set(vllm_metrics.LOAD_GAUGES)
    assert metrics.block_size == 128  # the CPU build's block; prefix hits come in whole blocks
    assert metrics.cache_config["enable_prefix_caching"] == "True"
    assert metrics.prefix_queries is not None and metrics.prefix_hits is not None
    assert metrics.prefix_hits <= metrics.prefix_queries


@pytest.mark.parametrize("family", vllm_metrics.READ)
def test_a_renamed_family_is_named_missing(family: str) -> None:
    renamed = REAL_032.replace(family, family.replace("vllm:", "vllm:old_"))
    metrics = vllm_metrics.parse(renamed)
    assert metrics.missing == (family,)
    assert family not in metrics.load


def test_the_old_kv_cache_name_does_not_count() -> None:
    """vLLM removed vllm:gpu_cache_usage_perc; a server that still sends only it lacks the new one."""
    old = REAL_032.replace("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
    assert vllm_metrics.parse(old).missing == (vllm_metrics.KV_USAGE,)


def test_the_proxy_logs_and_shows_a_missing_family(
    local_fake: RunningFake, cloud_fake: RunningFake, caplog: pytest.LogCaptureFixture
) -> None:
    config = make_config(local_fake.url, cloud_fake.url, routing__capacity={"metrics_interval_s": 0.1})
    server = ProxyServer(config)

    def missing() -> list[str]:
        return server.get("/readyz").json()["backends"]["local"]["endpoints"][0]["metrics_missing"]

    try:
        assert wait_until(
            lambda: (
                server.get("/readyz").json()["backends"]["local"]["endpoints"][0]["cache_block_size"] == 16
            )
        )
        assert missing() == []
        with caplog.at_level(logging.WARNING, logger="offload.backends"):
            fake_config(local_fake, metrics_without=[vllm_metrics.KV_USAGE, vllm_metrics.PREFIX_HITS])
            assert wait_until(lambda: missing() == [vllm_metrics.KV_USAGE, vllm_metrics.PREFIX_HITS])
        warned = [r.getMessage() for r in caplog.records if "lacks" in r.getMessage()]
        assert len(warned) == 1 and "vllm:kv_cache_usage_perc, vllm:prefix_cache_hits" in warned[0]
        fake_config(local_fake, metrics_without=[])
        assert wait_until(lambda: missing() == [])
    finally:
        server.stop()
