"""The simulated Spark's arithmetic: prefill and decode rates, FIFO chunking, the KV budget,
preemption and the block-hash prefix cache, checked by hand calculation."""

from __future__ import annotations

import os

import pytest

from router.fake.spark_engine import Engine, SparkSpec, block_hashes


def prompt(tokens: int, seed: bytes = b"a") -> bytes:
    """``tokens`` tokens of distinct bytes (four bytes a token), unique per ``seed``."""
    out = bytearray()
    i = 0
    while len(out) < tokens * 4:
        out += seed + i.to_bytes(3, "big")
        i += 1
    return bytes(out[: tokens * 4])


def run(engine: Engine, until: float, dt: float = 0.05) -> None:
    while engine.now < until - 1e-9:
        engine.step(dt)


def submit(engine: Engine, data: bytes, max_tokens: int = 10):  # type: ignore[no-untyped-def]
    tokens, hashes = block_hashes(data)
    return engine.submit(tokens, hashes, max_tokens)


def test_one_request_prefills_at_the_prefill_rate_and_decodes_at_the_decode_rate() -> None:
    engine = Engine(SparkSpec(prefill_tps=1000, decode_tps=20))
    seq = submit(engine, prompt(7000), max_tokens=41)
    run(engine, 10)
    assert seq.first_token_at == pytest.approx(7.0, abs=0.06)
    # the first token comes with the prefill; the other 40 at 20 tokens/s
    assert seq.finished_at == pytest.approx(7.0 + 40 / 20, abs=0.06)
    assert seq.output_tokens == 41


def test_prefill_is_first_come_first_served_not_shared() -> None:
    engine = Engine(SparkSpec(prefill_tps=1000, decode_tps=20))
    first = submit(engine, prompt(5000, b"x"), 1)
    second = submit(engine, prompt(5000, b"y"), 1)
    run(engine, 12)
    assert first.first_token_at == pytest.approx(5.0, abs=0.06)
    assert second.first_token_at == pytest.approx(10.0, abs=0.06)  # waited for the whole first


def test_max_num_seqs_keeps_the_rest_waiting() -> None:
    engine = Engine(SparkSpec(max_num_seqs=2))
    for i in range(5):
        submit(engine, prompt(100, bytes([i])), 1000)
    engine.step(0.1)
    assert (len(engine.running), len(engine.waiting)) == (2, 3)


def test_the_same_prefix_is_served_from_the_cache_in_whole_blocks() -> None:
    engine = Engine(SparkSpec(prefill_tps=1000))
    history = prompt(4000)
    one = submit(engine, history, 1)
    run(engine, 5)
    grown = history + prompt(1000, b"z")  # the next turn: the same history and more
    two = submit(engine, grown, 1)
    start = engine.now
    run(engine, 10)
    assert one.cached_tokens == 0
    assert two.cached_tokens == 4000  # 250 whole blocks
    assert two.first_token_at is not None
    assert two.first_token_at - start == pytest.approx(1.0, abs=0.06)  # only the new 1000 tokens
    assert (engine.prefix_queries, engine.prefix_hits) == (4000 + 5000, 4000)


def test_a_hit_never_covers_the_last_token_nor_a_partial_block() -> None:
    engine = Engine(SparkSpec())
    for tokens, expected in ((35, 32), (16, 0), (33, 32), (32, 16)):
        data = prompt(tokens, os.urandom(1))
        submit(engine, data, 1)
        run(engine, engine.now + 1)
        again = submit(engine, data, 1)
        run(engine, engine.now + 1)
        assert again.cached_tokens == expected, tokens


def test_finished_blocks_are_evicted_least_recently_used_first() -> None:
    # room for 102 blocks: two prompts of 50 full blocks and a partial one fill it; a third
    # evicts the older's blocks
    engine = Engine(SparkSpec(kv_tokens=16 * 102, prefill_tps=10_000))
    old, new, third = prompt(800, b"o"), prompt(800, b"n"), prompt(800, b"t")
    for data in (old, new):
        submit(engine, data + b"....", 1)
        run(engine, engine.now + 1)
    assert engine.kv_usage == 0.0 and len(engine.evictable) == 100
    submit(engine, third + b"....", 1)
    run(engine, engine.now + 1)
    again_new = submit(engine, new + b"....", 1)
    run(engine, engine.now + 1)
    again_old = submit(engine, old + b"....", 1)
    run(engine, engine.now + 1)
    assert again_new.cached_tokens == 800
    assert again_old.cached_tokens == 0


def test_kv_overflow_preempts_the_newest_and_recomputes_it() -> None:
    # 1000 tokens of KV; two 600-token prompts cannot both be held
    engine = Engine(SparkSpec(kv_tokens=1024, prefill_tps=1000, decode_tps=100))
    a = submit(engine, prompt(600, b"a"), 50)
    b = submit(engine, prompt(600, b"b"), 50)
    run(engine, 5)
    assert engine.preemptions >= 1 and b.preempted >= 1 and a.preempted == 0
    assert a.done and b.done
    assert a.finished_at is not None and b.finished_at is not None and b.finished_at > a.finished_at


def test_kv_usage_counts_the_blocks_running_requests_hold() -> None:
    engine = Engine(SparkSpec(kv_tokens=16 * 100, prefill_tps=10_000, decode_tps=1))
    submit(engine, prompt(800), 1000)  # 50 blocks of prompt, decoding slowly
    engine.step(0.2)
    assert engine.kv_usage == pytest.approx(0.51, abs=0.011)


def test_a_full_queue_says_so() -> None:
    engine = Engine(SparkSpec(max_num_seqs=1, max_num_queued_reqs=2))
    for i in range(3):
        submit(engine, prompt(100, bytes([i])), 1000)
    engine.step(0.01)
    assert engine.queue_full


def test_abort_frees_the_blocks() -> None:
    engine = Engine(SparkSpec(prefill_tps=100))
    seq = submit(engine, prompt(1000), 1)
    engine.step(1.0)
    assert engine.kv_usage > 0
    engine.abort(seq)
    assert engine.kv_usage == 0 and not engine.running
