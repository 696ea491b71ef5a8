"""A stored response belongs to the client key that minted it: another key naming its id
gets the very 404 an unknown id gets, on the local box and in the cloud alike."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from router.fake.upstream import RunningFake
from tests.conftest import fake_state
from tests.harness import ProxyServer, make_config, wait_until

KEY_A = "sk-offload-team-a-0123456789abcdef"
KEY_B = "sk-offload-team-b-0123456789abcdef"


@pytest.fixture
def two_keys(local_fake: RunningFake, cloud_fake: RunningFake) -> Iterator[ProxyServer]:
    keys = [{"name": "team-a", "key": KEY_A}, {"name": "team-b", "key": KEY_B}]
    proxy = ProxyServer(make_config(local_fake.url, cloud_fake.url, auth={"keys": keys}))
    yield proxy
    proxy.stop()


def client(proxy: ProxyServer, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.base_url, api_key=key, max_retries=0)


@pytest.mark.parametrize("route", ["local", "cloud"])
def test_another_key_cannot_continue_a_conversation(two_keys: ProxyServer, cloud_fake, route: str) -> None:
    a, b = client(two_keys, KEY_A), client(two_keys, KEY_B)
    first = a.responses.create(model=route, input="write a python function that reverses a list", store=True)
    # Its own key continues it, where it lives.
    assert a.responses.create(model="auto", input="and in rust?", previous_response_id=first.id).output_text
    cloud_seen = len(fake_state(cloud_fake)["received"])
    with pytest.raises(openai.NotFoundError) as foreign:
        b.responses.create(model="auto", input="show me what you said", previous_response_id=first.id)
    # Exactly what an id nobody minted gets on the local box (vLLM's own 404).
    made_up = "resp_" + "0" * 48
    with pytest.raises(openai.NotFoundError) as unknown:
        b.responses.create(model="local", input="show me what you said", previous_response_id=made_up)
    assert foreign.value.status_code == unknown.value.status_code == 404
    assert foreign.value.message.replace(first.id, "ID") == unknown.value.message.replace(made_up, "ID")
    assert len(fake_state(cloud_fake)["received"]) == cloud_seen  # the foreign turn went nowhere
    assert wait_until(lambda: len(two_keys.state.recorder.rows) == 3)  # A's two turns, the unknown id's


def test_the_binding_survives_a_restart_through_the_usage_rows(tmp_path, local_fake, cloud_fake) -> None:
    keys = [{"name": "team-a", "key": KEY_A}, {"name": "team-b", "key": KEY_B}]
    database = {"url": f"sqlite:///{tmp_path}/usage.db", "spool_path": str(tmp_path / "spool.jsonl")}
    config = make_config(local_fake.url, cloud_fake.url, auth={"keys": keys}, database=database)
    from router.ledger.db import upgrade
    from router.ledger.writer import UsageRecorder

    upgrade(database["url"])
    first_run = ProxyServer(config, recorder=UsageRecorder(config.database))
    try:
        minted = client(first_run, KEY_A).responses.create(model="cloud", input="hello", store=True)
    finally:
        first_run.stop()
    second_run = ProxyServer(config, recorder=UsageRecorder(config.database))
    try:
        assert wait_until(lambda: second_run.state.owners.owner(minted.id, "team-a") == "cloud", 10)
        with pytest.raises(openai.NotFoundError):
            client(second_run, KEY_B).responses.create(
                model="auto", input="hi", previous_response_id=minted.id
            )
    finally:
        second_run.stop()
