"""Failed console logins, counted per client address, so that guessing the admin key is slow.

A :class:`LoginThrottle` is a small state machine per address:

* **free**: fewer than ``free_failures`` failed logins within ``window_s``; every attempt
  is checked at once.
* **locked**: after the ``free_failures``-th failure the address must wait before its next
  attempt: ``base_wait_s`` after that failure, doubling with each further failure, capped at
  ``max_wait_s``. An attempt made while locked is refused (429 with ``Retry-After``)
  *without* the key being checked, so a locked guesser learns nothing, right key or wrong.
* a successful login, or ``window_s`` without a failure, forgets the address.

Five wrong keys, then one guess a second, two, four, ... and at most one guess every five
minutes: a 32-byte key is out of reach, and a person who mistyped twice never notices.
The map is bounded (the oldest addresses go first) so that a flood of spoofed addresses
costs memory it cannot grow. Counts are per replica: with N replicas behind a balancer a
guesser gets N times the attempts, which keeps the same order of magnitude.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(slots=True)
class _Failures:
    count: int
    last: float  # when the latest failure happened


class LoginThrottle:
    def __init__(
        self,
        *,
        free_failures: int = 5,
        base_wait_s: float = 1.0,
        max_wait_s: float = 300.0,
        window_s: float = 900.0,
        capacity: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.free_failures = free_failures
        self.base_wait_s = base_wait_s
        self.max_wait_s = max_wait_s
        self.window_s = window_s
        self.capacity = capacity
        self._clock = clock
        self._failures: OrderedDict[str, _Failures] = OrderedDict()

    def wait_s(self, address: str) -> float:
        """Seconds before ``address`` may try again; 0 when it may try now."""
        entry = self._current(address)
        if entry is None or entry.count < self.free_failures:
            return 0.0
        extra = entry.count - self.free_failures
        wait = min(self.base_wait_s * 2.0**extra, self.max_wait_s)
        return max(0.0, entry.last + wait - self._clock())

    def failed(self, address: str) -> None:
        """A wrong key from ``address``."""
        entry = self._current(address)
        now = self._clock()
        if entry is None:
            self._failures[address] = _Failures(1, now)
        else:
            entry.count += 1
            entry.last = now
            self._failures.move_to_end(address)
        while len(self._failures) > self.capacity:
            self._failures.popitem(last=False)

    def succeeded(self, address: str) -> None:
        """A right key: the address starts afresh."""
        self._failures.pop(address, None)

    def _current(self, address: str) -> _Failures | None:
        entry = self._failures.get(address)
        if entry is not None and self._clock() - entry.last > self.window_s:
            del self._failures[address]
            return None
        return entry
