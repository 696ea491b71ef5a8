"""``parse_vllm_load``: vLLM's /metrics text to the three gauges that steer routing.

A waiting queue means the box is full (requests spill to the cloud), so a misread
gauge is a routing bug: a timestamp read as the value, or NaN read as "never empty",
would send every request to the paid backend.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from router.forward.vllm_metrics import parse_vllm_load

# Two engines (data parallel) of vLLM 0.25, trimmed to the families around the ones we read.
VLLM_METRICS = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="poolside/Laguna-S-2.1-NVFP4"} 3.0
vllm:num_requests_running{engine="1",model_name="poolside/Laguna-S-2.1-NVFP4"} 4.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="poolside/Laguna-S-2.1-NVFP4"} 0.0
vllm:num_requests_waiting{engine="1",model_name="poolside/Laguna-S-2.1-NVFP4"} 2.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="poolside/Laguna-S-2.1-NVFP4"} 0.25
vllm:kv_cache_usage_perc{engine="1",model_name="poolside/Laguna-S-2.1-NVFP4"} 0.625
# HELP vllm:num_requests_waiting_by_reason Requests waiting, by reason.
# TYPE vllm:num_requests_waiting_by_reason gauge
vllm:num_requests_waiting_by_reason{engine="0",reason="capacity"} 9.0
# TYPE vllm:request_queue_time_seconds histogram
vllm:request_queue_time_seconds_bucket{engine="0",le="0.3"} 12.0
vllm:request_queue_time_seconds_count{engine="0"} 12.0
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 1.2e+10
"""


def test_engines_summed_and_the_fullest_cache_taken() -> None:
    assert parse_vllm_load(VLLM_METRICS) == {
        "vllm:num_requests_running": 7.0,
        "vllm:num_requests_waiting": 2.0,  # not the _by_reason family next to it
        "vllm:kv_cache_usage_perc": 0.625,  # the fullest engine, not a sum over 100%
    }


def test_crlf_text_reads_the_same() -> None:
    assert parse_vllm_load(VLLM_METRICS.replace("\n", "\r\n")) == parse_vllm_load(VLLM_METRICS)


def test_missing_families_are_absent_not_zero() -> None:
    """An older or trimmed exporter: the caller's default (0, "not full") applies."""
    only_running = "vllm:num_requests_running 1\n"
    assert parse_vllm_load(only_running) == {"vllm:num_requests_running": 1.0}
    assert parse_vllm_load("") == {}
    assert (
        parse_vllm_load("# HELP vllm:num_requests_waiting x\n# TYPE vllm:num_requests_waiting gauge\n") == {}
    )


def test_label_values_with_spaces_braces_and_quotes() -> None:
    text = (
        'vllm:num_requests_waiting{model_name="my model {v2} \\"fast\\"",engine="0"} 5\n'
        'vllm:num_requests_waiting{model_name="a b",engine="1"} 1\n'
    )
    assert parse_vllm_load(text) == {"vllm:num_requests_waiting": 6.0}


def test_a_timestamp_after_the_value_is_not_the_value() -> None:
    """The exposition format allows ``name{labels} value timestamp_ms``."""
    text = (
        'vllm:num_requests_waiting{engine="0"} 2 1764500000000\nvllm:kv_cache_usage_perc 0.5 1764500000000\n'
    )
    assert parse_vllm_load(text) == {"vllm:num_requests_waiting": 2.0, "vllm:kv_cache_usage_perc": 0.5}


def test_tabs_and_extra_spaces_between_tokens() -> None:
    assert parse_vllm_load("vllm:num_requests_running\t3\nvllm:num_requests_waiting   4  \n") == {
        "vllm:num_requests_running": 3.0,
        "vllm:num_requests_waiting": 4.0,
    }


def test_nan_and_infinities_are_skipped() -> None:
    """NaN waiting would compare false with ``<= 0`` for ever: the box would look full."""
    text = (
        'vllm:num_requests_waiting{engine="0"} NaN\n'
        'vllm:num_requests_waiting{engine="1"} 1\n'
        "vllm:num_requests_running +Inf\n"
        "vllm:kv_cache_usage_perc -Inf\n"
    )
    assert parse_vllm_load(text) == {"vllm:num_requests_waiting": 1.0}


def test_malformed_lines_are_skipped_not_fatal() -> None:
    text = (
        "vllm:num_requests_waiting\n"  # no value
        'vllm:num_requests_waiting{engine="0"} lots\n'
        'vllm:num_requests_waiting{engine="0" 3\n'  # unclosed labels
        "vllm:num_requests_running 2\n"
    )
    assert parse_vllm_load(text) == {"vllm:num_requests_running": 2.0}


_VALUE = st.floats(min_value=0, max_value=1e6, allow_nan=False)


@given(
    waiting=st.lists(_VALUE, min_size=1, max_size=6),
    usage=st.lists(st.floats(0, 1), min_size=1, max_size=6),
    timestamps=st.booleans(),
)
def test_any_number_of_engines(waiting: list[float], usage: list[float], timestamps: bool) -> None:
    suffix = " 1764500000000" if timestamps else ""
    lines = [f'vllm:num_requests_waiting{{engine="{i}"}} {v!r}{suffix}' for i, v in enumerate(waiting)]
    lines += [f'vllm:kv_cache_usage_perc{{engine="{i}"}} {v!r}{suffix}' for i, v in enumerate(usage)]
    got = parse_vllm_load("\n".join(lines))
    assert got["vllm:num_requests_waiting"] == sum(waiting)
    assert got["vllm:kv_cache_usage_perc"] == max(usage)
