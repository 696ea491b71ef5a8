"""What the router reads from a vLLM server's ``/metrics``, and whether all of it is there.

vLLM renames and removes metrics between releases (``vllm:gpu_cache_usage_perc``
became ``vllm:kv_cache_usage_perc``). A family the router reads that a server no
longer exports must not quietly read as 0 (0 waiting means "room"): :func:`parse`
names every missing family, the pool logs them, and ``/readyz`` shows them. The real-
vLLM tier (tests/realvllm) checks this list against a real server of each version.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

WAITING, RUNNING, KV_USAGE = (
    "vllm:num_requests_waiting",
    "vllm:num_requests_running",
    "vllm:kv_cache_usage_perc",
)
LOAD_GAUGES = (WAITING, RUNNING, KV_USAGE)
# Counters: the exposition format adds ``_total`` to the sample name.
PREFIX_QUERIES, PREFIX_HITS = "vllm:prefix_cache_queries", "vllm:prefix_cache_hits"
CACHE_CONFIG = "vllm:cache_config_info"  # an info gauge: the cache settings are its labels
READ = (*LOAD_GAUGES, PREFIX_QUERIES, PREFIX_HITS, CACHE_CONFIG)

# One sample of the exposition format: name, optional {labels} (the last "}" closes them: a
# value or timestamp never holds one), value, optional timestamp.
_SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+-?\d+)?[ \t]*")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
_SAMPLE_NAMES = {f"{PREFIX_QUERIES}_total": PREFIX_QUERIES, f"{PREFIX_HITS}_total": PREFIX_HITS}


@dataclass(frozen=True)
class VllmMetrics:
    """The families the router reads, summed over engines; ``missing`` the absent ones."""

    load: dict[str, float] = field(default_factory=dict)  # the LOAD_GAUGES present
    prefix_queries: float | None = None  # tokens looked up in the prefix cache, ever
    prefix_hits: float | None = None  # of those, found
    cache_config: dict[str, str] = field(default_factory=dict)  # block_size, enable_prefix_caching, …
    missing: tuple[str, ...] = ()

    @property
    def block_size(self) -> int | None:
        """Tokens per cache block: prefix hits come in whole blocks."""
        value = self.cache_config.get("block_size", "")
        return int(value) if value.isdigit() else None

    @property
    def kv_tokens(self) -> int | None:
        """The KV cache's size in tokens: ``num_gpu_blocks`` × ``block_size``, when it says."""
        blocks = self.cache_config.get("num_gpu_blocks", "")
        size = self.block_size
        return int(blocks) * size if blocks.isdigit() and size else None


def _samples(text: str) -> list[tuple[str, str, float]]:
    """(name, raw labels, value) of each finite sample of a family the router reads."""
    out = []
    for line in text.splitlines():
        if not line.startswith("vllm:"):
            continue
        sample = _SAMPLE.fullmatch(line.rstrip("\r"))
        if sample is None:
            continue
        name = _SAMPLE_NAMES.get(sample[1], sample[1])
        if name not in READ:
            continue  # another family with the same prefix (..._by_reason, ..._created)
        try:
            value = float(sample[3])
        except ValueError:
            continue
        if math.isfinite(value):
            out.append((name, sample[2] or "", value))
    return out


def parse(text: str) -> VllmMetrics:
    """Read the families in :data:`READ` from Prometheus text. Gauges and counters are summed
    over label sets (one per engine); the KV-cache share is the fullest engine's. A sample
    that is not a finite number (NaN, Inf, junk) is skipped: a NaN queue compares false with
    ``<= 0`` and would keep the box "full"."""
    load: dict[str, float] = {}
    counters: dict[str, float] = {}
    cache_config: dict[str, str] = {}
    for name, labels, value in _samples(text):
        if name == CACHE_CONFIG:
            cache_config = dict(_LABEL.findall(labels))
        elif name == KV_USAGE:
            load[name] = max(load.get(name, 0.0), value)
        elif name in LOAD_GAUGES:
            load[name] = load.get(name, 0.0) + value
        else:
            counters[name] = counters.get(name, 0.0) + value
    seen = {*load, *counters, *([CACHE_CONFIG] if cache_config else [])}
    return VllmMetrics(
        load=load,
        prefix_queries=counters.get(PREFIX_QUERIES),
        prefix_hits=counters.get(PREFIX_HITS),
        cache_config=cache_config,
        missing=tuple(name for name in READ if name not in seen),
    )


def parse_vllm_load(text: str) -> dict[str, float]:
    """The load gauges present in ``text`` (see :func:`parse`); an absent one is absent."""
    return parse(text).load
