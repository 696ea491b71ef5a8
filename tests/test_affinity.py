"""Sessions stick to the box that holds their prefix: two fake Sparks in one backend.

* every turn of a session reaches one endpoint, and the sessions spread over both;
* a session whose box goes down moves to the other and stays there (its cache is there now);
* three replicas sharing Redis send every turn of a session to the same box, whichever
  replica takes the turn; with Redis away they fall back to the same hashing without it;
* ``affinity: false`` is the least-in-flight choice of before.

Which endpoint served a turn is read off the fakes' own counts (one turn at a time).
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from router.fake.upstream import RunningFake, start_in_thread
from tests.conftest import fake_state
from tests.harness import ProxyServer, free_port, make_config, wait_until
from tests.test_shared_state_logic import REDIS_URL, need_redis

SESSIONS = 8
TURNS = 3


@pytest.fixture()
def boxes() -> Iterator[tuple[RunningFake, RunningFake]]:
    a, b = start_in_thread("vllm"), start_in_thread("vllm")
    yield a, b
    for box in (a, b):
        box.stop()


def two_box_config(a: RunningFake, b: RunningFake, cloud: RunningFake, **overrides: Any) -> Any:
    config = make_config(a.url, cloud.url, **overrides)
    local = config.backends["local"].model_copy(update={"endpoints": [a.url, b.url], "base_url": None})
    return config.model_copy(update={"backends": {**config.backends, "local": local}})


def turn(session: str, n: int) -> dict[str, Any]:
    """Turn ``n`` of a Claude Code-shaped session: its history grows, its header stays."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"fix the failing test in {session}"}]
    for i in range(n):
        messages += [{"role": "assistant", "content": f"step {i} done"}, {"role": "user", "content": "go on"}]
    return {"model": "local", "max_tokens": 16, "messages": messages}


def served_by(box: dict[str, RunningFake], server: ProxyServer, session: str, n: int) -> str:
    """Which box answered turn ``n`` of ``session`` (sent alone): the one whose count moved."""
    before = {name: fake_state(b)["completed"] for name, b in box.items()}
    headers = {"x-claude-code-session-id": session, "anthropic-version": "2023-06-01"}
    response = server.post("/v1/messages", json=turn(session, n), headers=headers)
    assert response.status_code == 200, response.text
    moved = [name for name, b in box.items() if fake_state(b)["completed"] != before[name]]
    assert len(moved) == 1, moved
    return moved[0]


def play(servers: list[ProxyServer], box: dict[str, RunningFake]) -> dict[str, list[str]]:
    """SESSIONS sessions of TURNS turns, turn by turn round the sessions, each turn through
    the next replica: where each session's turns went."""
    sessions = [str(uuid.uuid4()) for _ in range(SESSIONS)]
    replicas = itertools.cycle(servers)
    went: dict[str, list[str]] = {s: [] for s in sessions}
    for n in range(TURNS):
        for session in sessions:
            went[session].append(served_by(box, next(replicas), session, n))
    return went


def test_every_turn_of_a_session_reaches_one_box_and_sessions_spread(boxes, cloud_fake):
    a, b = boxes
    server = ProxyServer(two_box_config(a, b, cloud_fake))
    try:
        went = play([server], {"a": a, "b": b})
        assert all(len(set(turns)) == 1 for turns in went.values()), went
        homes = [turns[0] for turns in went.values()]
        assert {"a", "b"} == set(homes), "the sessions spread over both boxes"
    finally:
        server.stop()


def test_a_session_moves_only_when_its_box_goes_down_and_stays_moved(boxes, cloud_fake):
    a, b = boxes
    box = {"a": a, "b": b}
    server = ProxyServer(two_box_config(a, b, cloud_fake))
    try:
        # A session homed on a (the first found: the hashing decides, not the test).
        for _ in range(40):
            session = str(uuid.uuid4())
            if served_by(box, server, session, 0) == "a":
                break
        else:
            pytest.fail("no session of 40 went to box a")
        a.stop()
        endpoints = lambda: server.get("/readyz").json()["backends"]["local"]["endpoints"]  # noqa: E731
        assert wait_until(lambda: endpoints()[0]["up"] is False)
        hdrs = {"x-claude-code-session-id": session, "anthropic-version": "2023-06-01"}
        response = server.post("/v1/messages", json=turn(session, 1), headers=hdrs)
        assert response.status_code == 200 and response.headers["x-offload-route"] == "local"
        assert response.headers["x-offload-fallback"] == "0", "the backend's other box, not the cloud"
        metrics = server.get("/metrics").text
        assert 'offload_session_moves_total{backend="local"} 1.0' in metrics
        restarted = start_in_thread("vllm", port=int(a.url.split(":")[2].split("/")[0]))
        box["a"] = restarted
        try:
            assert wait_until(lambda: endpoints()[0]["up"] is True, timeout=10)
            # Back up, but the session's prefix is on b now: it stays there.
            for n in (2, 3):
                assert served_by(box, server, session, n) == "b"
        finally:
            restarted.stop()
    finally:
        server.stop()


def test_a_turn_in_the_cloud_leaves_the_session_its_box(boxes, cloud_fake):
    a, b = boxes
    box = {"a": a, "b": b}
    server = ProxyServer(two_box_config(a, b, cloud_fake))
    try:
        sessions = [str(uuid.uuid4()) for _ in range(6)]
        homes = {s: served_by(box, server, s, 0) for s in sessions}
        for session in sessions:  # one turn each in the cloud (the client's choice; its API: chat)...
            hdrs = {"x-claude-code-session-id": session}
            cloud = server.post(
                "/v1/chat/completions", json={**turn(session, 1), "model": "cloud"}, headers=hdrs
            )
            assert cloud.status_code == 200 and cloud.headers["x-offload-route"] == "cloud"
        # ...and back on the box that holds its history, whichever that is.
        assert {s: served_by(box, server, s, 2) for s in sessions} == homes
        assert 'offload_session_moves_total{backend="local"} 0.0' in server.get("/metrics").text
    finally:
        server.stop()


def test_without_affinity_the_endpoint_with_fewest_in_flight_takes_it(boxes, cloud_fake):
    a, b = boxes
    config = two_box_config(a, b, cloud_fake)
    local = config.backends["local"].model_copy(update={"affinity": False})
    server = ProxyServer(config.model_copy(update={"backends": {**config.backends, "local": local}}))
    try:
        went = play([server], {"a": a, "b": b})
        # One turn at a time: every endpoint is idle, the first listed takes each turn.
        assert all(turns == ["a"] * TURNS for turns in went.values())
    finally:
        server.stop()


@pytest.mark.parametrize("redis_up", [True, False], ids=["redis", "redis-away"])
def test_three_replicas_send_every_turn_of_a_session_to_one_box(boxes, cloud_fake, redis_up):
    a, b = boxes
    if redis_up:
        need_redis()
        url = REDIS_URL
    else:
        url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens: every replica falls back
    state = {"redis_url": url, "replicas": 3, "key_prefix": f"affinity-{uuid.uuid4().hex[:8]}"}
    servers = [ProxyServer(two_box_config(a, b, cloud_fake, state=state)) for _ in range(3)]
    try:
        if not redis_up:
            shared = [s.get("/readyz").json()["shared_state"] for s in servers]
            assert all(state["mode"] == "fallback" for state in shared)
        went = play(servers, {"a": a, "b": b})
        assert all(len(set(turns)) == 1 for turns in went.values()), went
        assert {"a", "b"} == {turns[0] for turns in went.values()}
    finally:
        for server in servers:
            server.stop()
