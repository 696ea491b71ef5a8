"""The prices a backend's tokens are valued at: the config's, with each provider's own rule
where the config leaves a cache price unset, and which of them were assumed.

A prompt is three parts: tokens read from the provider's prompt cache (``cached``), tokens
written to it (``cache_write``: Anthropic bills them above the input price) and the rest,
at the input price. Anthropic's multipliers are the same for every model (cache reads 0.1x
the input price, 5-minute cache writes 1.25x), so they are safe defaults; OpenAI's cached
discount differs by model (0.5x to 0.1x), so for other kinds an unset cached price means no
discount, and the report says that it assumed so rather than guess a ratio.
"""

from __future__ import annotations

from dataclasses import dataclass

from router.config import BackendConfig

# Anthropic's prompt caching prices, as multiples of the input price (5-minute cache).
ANTHROPIC_CACHE_READ = 0.1
ANTHROPIC_CACHE_WRITE = 1.25


@dataclass(frozen=True, slots=True)
class Rates:
    """Per million tokens, as the report values a backend's tokens."""

    input_per_mtok: float
    output_per_mtok: float
    cache_read_per_mtok: float
    cache_write_per_mtok: float
    # Anthropic caches what a turn adds so that the next turn reads it: a local turn's
    # uncached prompt, valued as this backend would have billed it, is a cache write.
    writes_uncached: bool
    assumed: tuple[str, ...]  # the prices above not set in the config: how each was derived


def rates(backend: BackendConfig) -> Rates:
    """A backend's prices, with the cache prices its config leaves unset derived by its kind."""
    price = backend.price
    anthropic = backend.kind == "anthropic"
    assumed: list[str] = []
    read = price.cached_input_per_mtok
    if read is None:
        read = price.input_per_mtok * (ANTHROPIC_CACHE_READ if anthropic else 1.0)
        assumed.append(f"cache read = {ANTHROPIC_CACHE_READ} x input" if anthropic else "cache read = input")
    write = price.cache_write_per_mtok
    if write is None:
        # Only Anthropic bills cache writes; elsewhere a written token is a plain input token.
        write = price.input_per_mtok * (ANTHROPIC_CACHE_WRITE if anthropic else 1.0)
        if anthropic:
            assumed.append(f"cache write = {ANTHROPIC_CACHE_WRITE} x input")
    return Rates(price.input_per_mtok, price.output_per_mtok, read, write, anthropic, tuple(assumed))


def cost(r: Rates, prompt: int, completion: int, cached: int, cache_write: int = 0) -> float:
    """What ``prompt`` input tokens (``cached`` of them read from the cache, ``cache_write``
    written to it) and ``completion`` output tokens cost at ``r``."""
    cached = min(max(cached, 0), prompt)
    cache_write = min(max(cache_write, 0), prompt - cached)
    plain = prompt - cached - cache_write
    return (
        plain * r.input_per_mtok
        + cached * r.cache_read_per_mtok
        + cache_write * r.cache_write_per_mtok
        + completion * r.output_per_mtok
    ) / 1e6


def as_cloud_would_bill(r: Rates, prompt: int, completion: int, cached: int, uncounted: int) -> float:
    """Local tokens at a cloud's prices, as that cloud would have billed the same turns.

    ``uncounted`` prompt tokens came from rows with no cached count (vLLM without
    ``--enable-prompt-tokens-details``): all input price, since nothing says they were
    cached. Of the rest, the cached part is a cache read and the uncached part plain input,
    or, for Anthropic, a cache write (every token an agent reads from Anthropic's cache was
    written there by an earlier turn at the write price)."""
    fresh = max(prompt - uncounted - cached, 0)
    return cost(r, prompt, completion, cached, fresh if r.writes_uncached else 0)


def as_dict(r: Rates) -> dict[str, object]:
    """The prices as the report prints them."""
    return {
        "input_per_mtok": r.input_per_mtok,
        "output_per_mtok": r.output_per_mtok,
        "cache_read_per_mtok": r.cache_read_per_mtok,
        "cache_write_per_mtok": r.cache_write_per_mtok,
        "uncached_local_as": "cache write" if r.writes_uncached else "input",
        "assumed": list(r.assumed),
    }
