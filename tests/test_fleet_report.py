"""The fleet benchmark's cache report: the ideal hit ratio and the session moves it prints."""

from __future__ import annotations

import random

from bench.fleet_report import Turn, cache_report
from bench.fleet_traffic import Session, Shared, add_turn, as_the_box_sees, body, reusable
from router.fake.spark_engine import BLOCK_SIZE, Engine, SparkSpec


def claude_session() -> tuple[Session, Shared]:
    rng = random.Random(7)
    return Session(0, "claude", 0.0, 3, rng, id="s-0"), Shared.make(rng)


def test_the_ideal_is_what_the_simulated_box_finds_cached_for_a_session_that_stays() -> None:
    session, shared = claude_session()
    engine = Engine(SparkSpec())
    add_turn(session, "user", session.user_turn(first=True))
    before: list[bytes] = []
    for _ in range(3):
        payload = body(session, shared, "<env>x</env>", 200, None)
        blocks = as_the_box_sees(session, payload)
        tokens = len(blocks) * BLOCK_SIZE
        seq = engine.submit(tokens, blocks, 1)
        while not seq.done:
            engine.step(1.0)
        assert seq.cached_tokens == reusable(blocks, before)
        before = blocks
        add_turn(session, "assistant", "reply " * 200)
        add_turn(session, "user", session.user_turn(first=False))
    assert reusable(blocks, before) == (len(blocks) - 1) * BLOCK_SIZE


def test_the_billing_header_changes_every_request_but_not_what_the_box_sees() -> None:
    session, shared = claude_session()
    add_turn(session, "user", "task")
    first, second = (body(session, shared, "<env/>", 10, None) for _ in range(2))
    assert first["system"][0] != second["system"][0]
    assert as_the_box_sees(session, first) == as_the_box_sees(session, second)


def test_a_session_whose_turns_alternate_boxes_counts_each_move() -> None:
    local = [Turn(0, n, "claude", "local", ideal=900, prompt=1000, cached=500) for n in range(3)]
    boxes = [
        {"prompt": 2000, "visits": [(0, 1.0), (0, 3.0), (1, 1.5)]},
        {"prompt": 1000, "visits": [(0, 2.0)]},
    ]
    report = cache_report(local, boxes)
    assert (report["moved"], report["moves"], report["sessions"]) == (1, 2, 2)
    assert report["hit"] == 0.5 and report["ideal"] == 0.9
    assert report["box_shares"] == [2 / 3, 1 / 3]
