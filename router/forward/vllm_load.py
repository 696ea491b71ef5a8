"""vLLM's load gauges (queue, running, KV cache) and its KV cache's size, read from its Prometheus text."""

from __future__ import annotations

import math
import re

_LOAD_GAUGES = ("vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc")
# One sample of the exposition format: name, optional {labels} (the last "}" closes them: a
# value or timestamp never holds one), value, optional timestamp.
_SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{.*\})?[ \t]+(\S+)(?:[ \t]+-?\d+)?[ \t]*")


def parse_vllm_load(text: str) -> dict[str, float]:
    """Sum the load gauges over label sets (one per model/engine) in Prometheus text; the
    KV-cache share is the fullest engine's. A sample that is not a finite number (NaN, Inf,
    junk) is skipped: a NaN queue compares false with ``<= 0`` and would keep the box "full"."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line.startswith(_LOAD_GAUGES):
            continue
        sample = _SAMPLE.fullmatch(line)
        if sample is None or sample[1] not in _LOAD_GAUGES:
            continue  # malformed, or another family with the same prefix (..._by_reason)
        try:
            value = float(sample[2])
        except ValueError:
            continue
        if not math.isfinite(value):
            continue
        name = sample[1]
        if name == "vllm:kv_cache_usage_perc":
            out[name] = max(out.get(name, 0.0), value)
        else:
            out[name] = out.get(name, 0.0) + value
    return out


# vllm:cache_config_info{block_size="16",num_gpu_blocks="51562",...} 1.0
_INFO = re.compile(r"^vllm:cache_config_info\{(?P<labels>[^}]*)\}", re.MULTILINE)
_LABEL = re.compile(r'(\w+)="([^"]*)"')


def kv_capacity_from_metrics(text: str) -> int | None:
    """The KV cache's size in tokens from vLLM's ``vllm:cache_config_info`` (num_gpu_blocks ×
    block_size, summed over engines), or None when the server does not say."""
    total = 0
    for match in _INFO.finditer(text):
        labels = dict(_LABEL.findall(match["labels"]))
        try:
            total += int(labels["num_gpu_blocks"]) * int(labels["block_size"])
        except (KeyError, ValueError):
            continue
    return total or None


def queue_full(status: int, error: bytes) -> bool:
    """Is this vLLM refusing for its own queue limits (--max-num-queued-reqs/tokens), in its
    own words? Any other 503 is a failure like every 5xx."""
    return status == 503 and b"cannot accept new requests" in error
