"""Per-key rate limits: requests and tokens per minute, in process.

A sliding window of one minute per key name. Requests are counted when they
are admitted (so a flood of bad requests costs the key too).

Tokens are only known once the upstream has answered, so admission reserves an
estimate instead (:func:`estimate_tokens`: the prompt from the body's size plus
the output the client allows, or a default) and :meth:`RateLimits.settle`
replaces it with the real usage when the request ends::

    reservation = limits.admit(name, estimate_tokens(size, body))   # or 429
    ...
    limits.settle(reservation, prompt_tokens + completion_tokens)

A key is refused while its used and reserved tokens leave no room for the new
estimate, so concurrent requests cannot all slip in under the budget before
any of them has been charged: with estimates that cover their requests, a key
spends at most its budget, plus one request when a single request's estimate
is larger than the whole budget (it is admitted alone, or never). A reservation
never settled (a request that ended before the proxy could charge it) lapses
after a minute.

With several replicas and a ``state:`` key, :meth:`RateLimits.enter` admits
against one set of windows in Redis (router/forward/shared_redis.py: the same
arithmetic, so a key's minute is the same whichever replica it reaches). These
in-process windows are that store's fallback: while Redis is away, each replica
enforces the limits on its own share of the traffic, as a lone process does.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from router.config import ClientKey
from router.errors import ProxyError
from router.forward.shared import IN_PROCESS_WINDOWS, WINDOW_S, Refused, WindowStore
from router.tokens import prompt_tokens

DEFAULT_OUTPUT_TOKENS = 1024  # reserved when a request names no output cap
_OUTPUT_CAPS = ("max_tokens", "max_completion_tokens", "max_output_tokens")


def estimate_tokens(
    size: int, body: Mapping[str, Any] | None = None, default_output: int = DEFAULT_OUTPUT_TOKENS
) -> int:
    """The tokens to reserve for a request of ``size`` bytes: its prompt estimated from
    the size, plus its output cap (``max_tokens``, ``max_completion_tokens`` or
    ``max_output_tokens``; ``default_output`` when it names none or the body is not
    parsed yet)."""
    output = default_output
    for key in _OUTPUT_CAPS:
        value = body.get(key) if body is not None else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            output = value
            break
    return prompt_tokens(size) + output


@dataclass(slots=True, eq=False)
class Reservation:
    """The tokens held for one admitted request until :meth:`RateLimits.settle`."""

    name: str | None
    tokens: int
    at: float
    held: bool = False  # still counted against the budget (false once settled or lapsed)
    settled: bool = False
    shared: str | None = None  # its id in the shared windows, when admitted there


# What admit() gives a caller without limits: settle() has nothing to do.
UNLIMITED = Reservation(None, 0, 0.0, settled=True)


@dataclass(slots=True)
class _Window:
    """What one key did in the last minute, and what its requests in flight hold."""

    rpm: int | None
    tpm: int | None
    requests: deque[float] = field(default_factory=deque)  # admission times
    tokens: deque[tuple[float, int]] = field(default_factory=deque)  # (finish time, tokens)
    token_sum: int = 0
    open: OrderedDict[Reservation, None] = field(default_factory=OrderedDict)  # oldest first
    reserved: int = 0

    def expire(self, now: float) -> None:
        start = now - WINDOW_S
        while self.requests and self.requests[0] <= start:
            self.requests.popleft()
        while self.tokens and self.tokens[0][0] <= start:
            self.token_sum -= self.tokens.popleft()[1]
        while self.open:
            oldest = next(iter(self.open))
            if oldest.at > start:
                break
            self._release(oldest)

    def _release(self, reservation: Reservation) -> None:
        if reservation.held:
            del self.open[reservation]
            self.reserved -= reservation.tokens
            reservation.held = False

    @property
    def committed(self) -> int:
        return self.token_sum + self.reserved


class RateLimits:
    """Admission control keyed by the client key's name (never the key)."""

    def __init__(
        self,
        keys: Iterable[ClientKey],
        clock: Callable[[], float] = time.monotonic,
        store: WindowStore = IN_PROCESS_WINDOWS,
    ) -> None:
        self._clock = clock
        self._store = store  # the windows every replica shares, when configured
        self._windows: dict[str, _Window] = {
            k.name: _Window(k.requests_per_minute, k.tokens_per_minute)
            for k in keys
            if k.requests_per_minute or k.tokens_per_minute
        }

    def admit(self, name: str | None, reserve_tokens: int = 0) -> Reservation:
        """Count one request for ``name`` and hold ``reserve_tokens`` of its token budget,
        or raise 429 with ``Retry-After``. Give the result to :meth:`settle` once."""
        window = self._windows.get(name) if name is not None else None
        if window is None:
            return UNLIMITED  # open proxy, or a key without limits
        now = self._clock()
        window.expire(now)
        reserve = max(reserve_tokens, 0) if window.tpm is not None else 0
        if window.tpm is not None and not self._fits(window, reserve):
            wait = self._token_wait(window, now, reserve)
            raise _limited(f"tokens per minute for key {name!r} used up ({window.tpm})", wait, "tokens")
        if window.rpm is not None and len(window.requests) >= window.rpm:
            wait = window.requests[0] + WINDOW_S - now
            raise _limited(f"requests per minute for key {name!r} used up ({window.rpm})", wait, "requests")
        window.requests.append(now)
        reservation = Reservation(name, reserve, now, held=reserve > 0)
        if reservation.held:
            window.open[reservation] = None
            window.reserved += reserve
        return reservation

    async def enter(self, name: str | None, reserve_tokens: int = 0) -> Reservation:
        """:meth:`admit` as the proxy calls it: against the windows every replica shares
        while that store answers, else (no ``state:``, or Redis away) this process's."""
        window = self._windows.get(name) if name is not None else None
        if window is None or name is None:
            return UNLIMITED
        reserve = max(reserve_tokens, 0) if window.tpm is not None else 0
        shared = await self._store.admit(name, window.rpm, window.tpm, reserve)
        if shared is None:
            return self.admit(name, reserve_tokens)
        if isinstance(shared, Refused):
            limit = window.tpm if shared.what == "tokens" else window.rpm
            message = f"{shared.what} per minute for key {name!r} used up ({limit})"
            raise _limited(message, shared.wait_s, shared.what)
        return Reservation(name, reserve, self._clock(), shared=shared)

    def settle(self, reservation: Reservation, actual_tokens: int) -> None:
        """A request ended: release what it held and charge what it used. Once per
        reservation; a second call charges nothing."""
        if reservation.settled:
            return
        reservation.settled = True
        window = self._windows.get(reservation.name) if reservation.name is not None else None
        if window is None or reservation.name is None:
            return
        if reservation.shared is not None:
            charge = actual_tokens if window.tpm is not None and actual_tokens > 0 else 0
            if self._store.settle(reservation.name, reservation.shared, reservation.tokens, charge):
                return
            # The store is away: its reservation lapses there; the usage counts here.
        window._release(reservation)  # unless it lapsed: the usage is charged all the same
        self._charge(window, actual_tokens)

    def add_tokens(self, name: str | None, tokens: int) -> None:
        """Charge tokens to ``name``'s window without a reservation."""
        window = self._windows.get(name) if name is not None else None
        if window is None or name is None or window.tpm is None or tokens <= 0:
            return
        if not self._store.charge(name, tokens):
            self._charge(window, tokens)

    def _charge(self, window: _Window, tokens: int) -> None:
        if window.tpm is None or tokens <= 0:
            return
        now = self._clock()
        window.expire(now)
        window.tokens.append((now, tokens))
        window.token_sum += tokens

    @staticmethod
    def _fits(window: _Window, reserve: int) -> bool:
        """Room for ``reserve`` more; a request alone on an idle key always fits (else a
        request estimated above the whole budget could never run)."""
        assert window.tpm is not None
        committed = window.committed
        return committed == 0 or committed + max(reserve, 1) <= window.tpm

    @staticmethod
    def _token_wait(window: _Window, now: float, reserve: int) -> float:
        """Seconds until enough charged tokens leave the window for ``reserve`` to fit; a
        second when only requests in flight are in the way (they settle soon)."""
        assert window.tpm is not None
        committed = window.committed
        for at, count in window.tokens:
            committed -= count
            if committed == 0 or committed + max(reserve, 1) <= window.tpm:
                return at + WINDOW_S - now
        return 1.0


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
