"""Backend variants: the same server with other settings, sharing its capacity."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from router.config import ConfigError
from router.fake.upstream import RunningFake
from tests.conftest import fake_config, fake_state
from tests.harness import USER, ProxyServer, make_config


def with_variant(local: RunningFake, cloud: RunningFake, **variant: Any) -> Any:
    base = make_config(local.url, cloud.url)
    raw = base.model_dump(mode="json", exclude_unset=True)
    raw["backends"]["local"]["max_concurrency"] = 2
    raw["backends"]["local-thinking"] = {
        "variant_of": "local",
        "thinking": "on",
        "max_output_tokens": 65536,
        **variant,
    }
    from router.config import parse_config

    return parse_config(raw, env={})


def test_a_variant_inherits_its_server_and_overrides_its_settings(local_fake, cloud_fake):
    config = with_variant(
        local_fake, cloud_fake, extra_body={"chat_template_kwargs": {"reasoning_budget": 8192}}
    )
    variant = config.backends["local-thinking"]
    assert (variant.kind, variant.base_url, variant.max_concurrency, variant.route_name) == (
        "vllm",
        local_fake.url,
        2,
        "local",
    )
    # extra_body merged key by key: the server's switch stays, the variant's budget is added.
    assert variant.extra_body["chat_template_kwargs"] == {"enable_thinking": False, "reasoning_budget": 8192}
    assert variant.hardware is None  # the server's hardware is counted once, with the server


@pytest.mark.parametrize(
    "variant, complaint",
    [
        ({"variant_of": "nope"}, "backends.x.variant_of: unknown backend 'nope'"),
        (
            {"variant_of": "local", "base_url": "http://other:1/v1"},
            "backends.x.base_url: a variant shares its server's",
        ),
        (
            {"variant_of": "local", "max_concurrency": 64},
            "backends.x.max_concurrency: a variant shares its server's",
        ),
        ({"variant_of": "y"}, "backends.x.variant_of: 'y' is itself a variant"),
    ],
)
def test_bad_variants_are_one_line_errors(variant, complaint):
    raw = {
        "backends": {
            "local": {"kind": "vllm", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
            "y": {"variant_of": "local"},
            "x": variant,
        }
    }
    from router.config import parse_config

    with pytest.raises(ConfigError) as caught:
        parse_config(raw, env={})
    assert complaint in str(caught.value) and "\n" not in str(caught.value)


def test_variants_share_one_count_of_slots(local_fake, cloud_fake):
    """Two slots on the box: two requests on `local` fill it, so `local-thinking` spills."""
    proxy = ProxyServer(with_variant(local_fake, cloud_fake))
    try:
        fake_config(local_fake, first_byte_delay=1.5)

        async def burst() -> list[httpx.Response]:
            async with httpx.AsyncClient(base_url=proxy.base_url, timeout=30) as client:
                holders = [
                    asyncio.create_task(
                        client.post("/chat/completions", json={"model": "local", "messages": USER})
                    )
                    for _ in range(2)
                ]
                await asyncio.sleep(0.5)  # both hold a slot on the box now
                pool = proxy.state.pool
                assert pool.backends["local"].in_flight == pool.backends["local-thinking"].in_flight == 2
                variant = await client.post(
                    "/chat/completions", json={"model": "local-thinking", "messages": USER}
                )
                return [*await asyncio.gather(*holders), variant]

        first, second, variant = asyncio.run(burst())
        assert [r.headers["x-offload-route"] for r in (first, second)] == ["local", "local"]
        assert (variant.headers["x-offload-route"], variant.headers["x-offload-fallback"]) == ("cloud", "1")
        fake_config(local_fake, first_byte_delay=0)
        served = proxy.post("/v1/chat/completions", json={"model": "local-thinking", "messages": USER})
        assert served.headers["x-offload-route"] == "local-thinking"
        assert served.headers["x-offload-thinking"] == "on; by=config"
        sent = fake_state(local_fake)["received"][-1]["body"]
        assert (
            sent["chat_template_kwargs"]["enable_thinking"] is True
            and sent["model"] == proxy.config.backends["local"].model
        )
        assert proxy.state.pool.backends["local"].in_flight == 0
    finally:
        proxy.stop()
