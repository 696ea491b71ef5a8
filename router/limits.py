"""Per-key rate limits: requests and tokens per minute, in process.

A sliding window of one minute per key name. Requests are counted when they
are admitted (so a flood of bad requests costs the key too); tokens are only
known once the upstream has answered, so they are added afterwards through
:meth:`RateLimits.add_tokens`, which ``Router.finish`` calls once per request.
A key that has used its whole token budget in the last minute is refused at
admission until enough of it slides out of the window; one request in flight
may therefore overshoot the budget, never two minutes running.

The windows live in this process only: with several replicas, each enforces
the limit on its own share of the traffic.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from router.config import ClientKey
from router.errors import ProxyError

WINDOW_S = 60.0


@dataclass(slots=True)
class _Window:
    """What one key did in the last minute."""

    rpm: int | None
    tpm: int | None
    requests: deque[float] = field(default_factory=deque)  # admission times
    tokens: deque[tuple[float, int]] = field(default_factory=deque)  # (finish time, tokens)
    token_sum: int = 0

    def expire(self, now: float) -> None:
        start = now - WINDOW_S
        while self.requests and self.requests[0] <= start:
            self.requests.popleft()
        while self.tokens and self.tokens[0][0] <= start:
            self.token_sum -= self.tokens.popleft()[1]


class RateLimits:
    """Admission control keyed by the client key's name (never the key)."""

    def __init__(self, keys: Iterable[ClientKey], clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._windows: dict[str, _Window] = {
            k.name: _Window(k.requests_per_minute, k.tokens_per_minute)
            for k in keys
            if k.requests_per_minute or k.tokens_per_minute
        }

    def admit(self, name: str | None) -> None:
        """Count one request for ``name``, or raise 429 with ``Retry-After``."""
        window = self._windows.get(name) if name is not None else None
        if window is None:
            return  # open proxy, or a key without limits
        now = self._clock()
        window.expire(now)
        if window.tpm is not None and window.token_sum >= window.tpm:
            wait = self._token_wait(window, now)
            raise _limited(f"tokens per minute for key {name!r} used up ({window.tpm})", wait, "tokens")
        if window.rpm is not None and len(window.requests) >= window.rpm:
            wait = window.requests[0] + WINDOW_S - now
            raise _limited(f"requests per minute for key {name!r} used up ({window.rpm})", wait, "requests")
        window.requests.append(now)

    def add_tokens(self, name: str | None, tokens: int) -> None:
        """Charge a finished request's tokens to ``name``'s window."""
        window = self._windows.get(name) if name is not None else None
        if window is None or window.tpm is None or tokens <= 0:
            return
        now = self._clock()
        window.expire(now)
        window.tokens.append((now, tokens))
        window.token_sum += tokens

    @staticmethod
    def _token_wait(window: _Window, now: float) -> float:
        """Seconds until enough tokens leave the window to fall under the budget."""
        assert window.tpm is not None
        over = window.token_sum - window.tpm
        for at, count in window.tokens:
            over -= count
            if over < 0:
                return at + WINDOW_S - now
        return WINDOW_S


def _limited(message: str, wait_s: float, what: str) -> ProxyError:
    # Retry-After is whole seconds; never 0, or clients would spin.
    seconds = max(1, math.ceil(wait_s))
    return ProxyError(
        429,
        f"rate limit reached: {message}; retry after {seconds} s",
        code="rate_limit_exceeded",
        param=what,
        headers={"Retry-After": str(seconds)},
    )
