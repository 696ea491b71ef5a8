"""Admission's state machine, directly: the estimate, the decision, the deadline, and the
learned rates against the simulated Spark's true ones (router/fake/spark_engine.py)."""

from __future__ import annotations

import random

import pytest

from router.fake.spark_engine import Engine, SparkSpec, block_hashes
from router.forward.admission import ADMIT, KV, SPILL, TTFT, WAIT, EndpointLoad, Rate
from router.forward.vllm_metrics import parse


def load(**kw: object) -> EndpointLoad:
    args: dict[str, object] = {
        "max_ttft_s": 30.0,
        "prefill": Rate.starting_at(700.0),
        "decode": Rate.starting_at(20.0),
        "queue_tokens": 100_000,
    }
    args.update(kw)
    return EndpointLoad(**args)  # type: ignore[arg-type]


def body_of(tokens: int, bytes_per_token: float = 3.2) -> int:
    return int(tokens * bytes_per_token)


def test_an_idle_box_admits_a_prompt_longer_than_max_ttft_only_when_it_cannot_go_elsewhere() -> None:
    account = load()
    admit = account.decide(body_of(60_000), 0.0, may_spill=False)
    assert admit.verdict == ADMIT  # nothing ahead: waiting cannot make it sooner here
    assert admit.expected_ttft_s == pytest.approx(60_000 / 700, rel=0.01)
    # With a fallback it goes there: 86 s of prefill here would hold up every request after it.
    assert account.decide(body_of(60_000), 0.0, may_spill=True).reason == TTFT


def test_the_first_of_a_clients_prefix_warms_an_idle_box_even_past_max_ttft() -> None:
    """Claude Code's first turn is ~25K tokens (36 s at 700 tokens/s): spilled, the box would
    never learn its 20K-token fixed prefix, and no session of that client would run there."""
    account = load()
    first = account.decide(body_of(25_000), 0.0, may_spill=True, warm=False, first=True)
    assert first.verdict == ADMIT and first.expected_ttft_s > account.max_ttft_s
    account.admit(first, 0.0)
    # Not while others' prefill is owed: then it would hold them up.
    assert account.decide(body_of(25_000), 0.0, may_spill=True, warm=False, first=True).reason == TTFT


def test_a_burst_of_long_prompts_spills_by_ttft_once_the_owed_prefill_passes_max_ttft() -> None:
    account = load()
    verdicts = []
    for _ in range(5):
        admit = account.decide(body_of(9_000), 0.0, may_spill=True)
        verdicts.append(admit.verdict)
        if admit.verdict == ADMIT:
            account.admit(admit, 0.0)
    # 9K tokens are 12.9 s at 700/s: two fit under 30 s, the third would wait 38.6 s
    assert verdicts == [ADMIT, ADMIT, SPILL, SPILL, SPILL]
    assert account.decide(body_of(9_000), 0.0, may_spill=True).reason == TTFT


def test_a_conversation_the_box_holds_nothing_of_gets_half_of_max_ttft_while_others_are_owed() -> None:
    account = load()
    cold = account.decide(body_of(14_000), 0.0, may_spill=True, warm=False)  # 20 s on an idle box
    assert cold.verdict == ADMIT  # no warm session waits for the box: the whole max_ttft_s
    account.admit(account.decide(body_of(2_000), 0.0, may_spill=True), 0.0)  # 2.9 s owed ahead
    assert account.decide(body_of(14_000), 0.0, may_spill=True, warm=False).reason == TTFT  # past 15 s
    assert account.decide(body_of(14_000), 0.0, may_spill=True, warm=True).verdict == ADMIT  # 22.9 s


def test_without_a_fallback_it_waits_in_a_queue_bounded_in_tokens() -> None:
    account = load(queue_tokens=20_000)
    for _ in range(3):
        account.admit(account.decide(body_of(9_000), 0.0, may_spill=False), 0.0)
    assert account.decide(body_of(9_000), 0.0, may_spill=False).verdict == WAIT
    account.waiting_tokens = 15_000  # others already wait
    assert account.decide(body_of(9_000), 0.0, may_spill=False).verdict == SPILL  # the queue is full


def test_a_kv_bound_burst_spills_by_kv() -> None:
    account = load(kv_capacity=100_000, max_ttft_s=10_000.0)
    admitted = 0
    while (admit := account.decide(body_of(30_000), 0.0, may_spill=True)).verdict == ADMIT:
        account.admit(admit, 0.0)
        admitted += 1
    assert admitted == 3 and admit.reason == KV  # 3 x (30K + 400 output) fit in 100K, a fourth not


def test_the_head_of_the_prefill_queue_progresses_with_time() -> None:
    account = load()
    account.admit(account.decide(body_of(7_000), 0.0, may_spill=True), 0.0)
    assert account.prefill_owed(0.0) == pytest.approx(7_000, rel=0.01)
    assert account.prefill_owed(5.0) == pytest.approx(3_500, rel=0.01)


def test_a_first_byte_settles_the_prefill_of_everything_before_it() -> None:
    account = load()
    tickets = [account.admit(account.decide(body_of(3_000), 0.0, may_spill=True), 0.0) for _ in range(3)]
    account.first_byte(tickets[1], 8.0)  # FIFO: the first is done too
    assert list(account.owed) == [tickets[2].id]
    assert account.kv_held == 3 * (tickets[0].kv_tokens)


def test_a_whole_answer_settles_the_prefill_before_it_but_teaches_no_prefill_rate() -> None:
    account = load()
    tickets = [account.admit(account.decide(body_of(3_000), 0.0, may_spill=True), 0.0) for _ in range(3)]
    account.finished(tickets[1], 20.0, body_of(3_000), 3_000, 0, 201)  # not streamed: no first byte
    assert list(account.owed) == [tickets[2].id]  # FIFO: the first one's prefill is done too
    assert account.prefill.value == pytest.approx(700.0)  # when its prefill ended is not measured
    assert account.prefill_owed(10.0) == pytest.approx(3_000, rel=0.01)  # the third starts at 10 s


def test_the_deadline_grows_with_the_expected_ttft_and_keeps_a_floor() -> None:
    account = load(first_byte_s=60.0)
    first = account.admit(account.decide(body_of(14_000), 0.0, may_spill=True), 0.0)
    second = account.admit(account.decide(body_of(14_000), 0.0, may_spill=True), 0.0)
    assert first.deadline_s == pytest.approx(20 * 2 + 60, rel=0.02)
    assert second.deadline_s == pytest.approx(40 * 2 + 60, rel=0.02)


def test_the_deadline_takes_no_credit_for_the_prefix_cache() -> None:
    account = load(first_byte_s=60.0)
    admit = account.decide(body_of(14_000), 0.0, may_spill=True, cached=13_000)
    ticket = account.admit(admit, 0.0)
    assert ticket.expected_ttft_s == pytest.approx(1_000 / 700, rel=0.02)
    assert ticket.deadline_s == pytest.approx(20 * 2 + 60, rel=0.02)  # as if nothing were cached


def test_bytes_per_token_learns_from_reported_usage() -> None:
    account = load()
    for _ in range(30):
        ticket = account.admit(account.decide(40_000, 0.0, may_spill=True), 0.0)
        account.finished(ticket, 1.0, 40_000, 10_000, 0, 10)  # the tokenizer's 4 bytes a token
    assert account.estimate(40_000) == pytest.approx(10_000, rel=0.05)


def test_kv_capacity_comes_from_vllms_cache_config_info() -> None:
    text = (
        "# TYPE vllm:cache_config_info gauge\n"
        'vllm:cache_config_info{block_size="16",cache_dtype="auto",num_gpu_blocks="51562"} 1.0\n'
    )
    assert parse(text).kv_tokens == 51562 * 16
    assert parse("vllm:num_requests_running 1\n").kv_tokens is None


def test_learned_rates_converge_on_the_simulated_boxs_true_rates_within_15_percent() -> None:
    """50 agent-like requests (shared prefixes, some concurrent) on a simulated box whose
    rates are far from the configured start: the learned rates end within 15 %."""
    true_prefill, true_decode = 450.0, 31.0
    engine = Engine(SparkSpec(prefill_tps=true_prefill, decode_tps=true_decode))
    account = load(max_ttft_s=1e9)  # starts at 700 and 20
    rng = random.Random(7)
    system = bytes(rng.getrandbits(8) for _ in range(20_000))
    pending: list[tuple[object, object, int]] = []
    finished = 0
    t_next = 0.0
    while finished < 50:
        if engine.now >= t_next and len(pending) < 4:
            size = rng.randint(4_000, 40_000)
            data = system + bytes(rng.getrandbits(8) for _ in range(size))
            tokens, hashes = block_hashes(data)
            seq = engine.submit(tokens, hashes, rng.randint(50, 400))
            admit = account.decide(len(data), engine.now, may_spill=False)
            pending.append((seq, account.admit(admit, engine.now), len(data)))
            t_next = engine.now + rng.uniform(0.0, 20.0)
        engine.step(0.05)
        for item in list(pending):
            seq, ticket, size = item
            if seq.first_token_at is not None and ticket.first_byte_at is None:  # type: ignore[attr-defined]
                account.first_byte(ticket, seq.first_token_at)  # type: ignore[arg-type, attr-defined]
            if seq.done:  # type: ignore[attr-defined]
                account.finished(
                    ticket,  # type: ignore[arg-type]
                    seq.finished_at,  # type: ignore[attr-defined]
                    size,
                    seq.prompt_tokens,  # type: ignore[attr-defined]
                    seq.cached_tokens,  # type: ignore[attr-defined]
                    seq.output_tokens,  # type: ignore[attr-defined]
                )
                pending.remove(item)
                finished += 1
    assert account.prefill.value == pytest.approx(true_prefill, rel=0.15)
    assert account.decode.value == pytest.approx(true_decode, rel=0.15)
