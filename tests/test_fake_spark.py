"""The fake upstream in Spark mode, over HTTP: scaled time, cached tokens in each API's usage,
vLLM's metric names, and the 503 of a full queue."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import orjson
import pytest

from router.fake.spark import SparkFake
from router.fake.spark_engine import SparkSpec
from router.fake.upstream import RunningFake

SCALE = 5.0  # low enough that the client's own real milliseconds stay small in simulated time
SYSTEM = "You are a coding agent. " * 400  # ~2,400 tokens of a shared system prompt


@pytest.fixture
def spark() -> Iterator[RunningFake]:
    spec = SparkSpec(prefill_tps=500, decode_tps=20, max_num_seqs=1, max_num_queued_reqs=1)
    running = RunningFake(SparkFake(spec, scale=SCALE, max_output=20))
    yield running
    running.stop()


def chat(turns: list[str], stream: bool = True) -> dict[str, object]:
    messages = [{"role": "system", "content": SYSTEM}] + [{"role": "user", "content": t} for t in turns]
    return {
        "model": "m",
        "messages": messages,
        "stream": stream,
        "stream_options": {"include_usage": True},
        "max_tokens": 10,
    }


def streamed(url: str, body: dict[str, object]) -> tuple[float, float, dict[str, object]]:
    """Simulated seconds to the first event and to the end, and the usage chunk."""
    t0 = time.perf_counter()
    first = None
    usage: dict[str, object] = {}
    with httpx.stream("POST", url + "/chat/completions", json=body, timeout=30) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            first = first or time.perf_counter()
            event = orjson.loads(line[6:])
            if event.get("usage"):
                usage = event["usage"]
    assert first is not None
    return (first - t0) * SCALE, (time.perf_counter() - t0) * SCALE, usage


def test_first_token_after_the_prefill_and_the_end_after_the_decode(spark: RunningFake) -> None:
    ttft, total, usage = streamed(spark.url, chat(["write a parser"]))
    prompt = int(usage["prompt_tokens"])  # type: ignore[call-overload]
    assert prompt > 2000
    assert ttft == pytest.approx(prompt / 500, abs=2.0)  # 0.4 real seconds of slack on a busy machine
    assert total - ttft == pytest.approx(9 / 20, abs=1.5)  # nine more tokens at 20/s
    assert usage["completion_tokens"] == 10
    assert usage["prompt_tokens_details"] == {"cached_tokens": 0}


def test_the_next_turn_reads_its_history_from_the_cache(spark: RunningFake) -> None:
    cold, _, first = streamed(spark.url, chat(["write a parser"]))
    warm, _, second = streamed(spark.url, chat(["write a parser", "now test it"]))
    cached = second["prompt_tokens_details"]["cached_tokens"]  # type: ignore[index]
    assert cached >= int(first["prompt_tokens"]) - 16  # type: ignore[call-overload]
    assert warm < cold / 3


def test_messages_and_responses_report_cached_tokens_as_vllm_does(spark: RunningFake) -> None:
    messages = {
        "model": "m",
        "max_tokens": 5,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": "hi"}],
    }
    httpx.post(spark.url + "/messages", json=messages, timeout=30)
    again = httpx.post(spark.url + "/messages", json=messages, timeout=30).json()["usage"]
    assert again["cache_read_input_tokens"] > 2000
    assert again["input_tokens"] < 16  # outside input_tokens, Anthropic's convention
    responses = {"model": "m", "max_output_tokens": 5, "instructions": SYSTEM, "input": "hi"}
    httpx.post(spark.url + "/responses", json=responses, timeout=30)
    usage = httpx.post(spark.url + "/responses", json=responses, timeout=30).json()["usage"]
    assert usage["input_tokens_details"]["cached_tokens"] > 2000
    assert usage["input_tokens"] > usage["input_tokens_details"]["cached_tokens"]  # inside it
    assert usage["output_tokens"] == 5


def test_metrics_use_vllms_names(spark: RunningFake) -> None:
    streamed(spark.url, chat(["hello"]))
    text = httpx.get(spark.root + "/metrics").text
    for name in (
        "vllm:num_requests_running{",
        "vllm:num_requests_waiting{",
        "vllm:kv_cache_usage_perc{",
        "vllm:prefix_cache_queries_total{",
        "vllm:prefix_cache_hits_total{",
        "vllm:num_preemptions_total{",
    ):
        assert name in text
    info = next(line for line in text.splitlines() if line.startswith("vllm:cache_config_info{"))
    assert 'block_size="16"' in info and f'num_gpu_blocks="{825_000 // 16}"' in info


def test_a_full_queue_is_vllms_503_before_any_byte(spark: RunningFake) -> None:
    long = chat(["x" * 20_000], stream=False)  # ~7,500 tokens: 15 simulated seconds each
    with httpx.Client(timeout=30) as client:
        results: list[int] = []

        def send() -> None:
            results.append(client.post(spark.url + "/chat/completions", json=long).status_code)

        threads = [threading.Thread(target=send) for _ in range(2)]
        for t in threads:
            t.start()
            time.sleep(0.02)  # the first runs (max_num_seqs 1), the second waits (queue of 1)
        refused = client.post(spark.url + "/chat/completions", json=long)
        for t in threads:
            t.join()
    assert refused.status_code == 503
    assert "cannot accept new requests" in refused.json()["error"]["message"]
    assert sorted(results) == [200, 200]
