"""vLLM's load gauges (queue, running, KV cache) read from its Prometheus text."""

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
