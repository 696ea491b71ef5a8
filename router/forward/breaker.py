"""The circuit breaker of one endpoint: a small state machine fed by requests and probes."""

from __future__ import annotations

import time

CLOSED, HALF_OPEN, OPEN = "closed", "half_open", "open"
BREAKER_CODES = {CLOSED: 0, HALF_OPEN: 1, OPEN: 2}
REQUESTS, PROBE = "requests", "probe"  # what opened a breaker


class Breaker:
    """One endpoint's circuit breaker: closed → open → half-open trial → closed.

    Two signals feed it, and they are not worth the same:

    * **Real requests** (:meth:`success`, :meth:`failure`): ``threshold``
      consecutive failures (connect errors, resets, 5xx, 408, timeouts) open it.
      Only a real request closes a breaker that requests opened: after
      ``open_s`` the next request to the endpoint is its one half-open trial;
      success closes the breaker, failure opens it for another ``open_s``.
    * **The health probe** (:meth:`trip`, :meth:`probe_passed`): a failing probe
      opens it at once (the box is down). A passing probe closes a breaker that
      a failing probe opened (the box is back). It neither clears the count of
      failed requests (at low traffic the failures a box piles up between
      probes are the only evidence) nor closes a breaker that requests opened:
      vLLM's ``/health`` can pass while every completion fails, and closing on
      it would send a burst of doomed requests after every probe.

    ``opened_by`` says which signal holds it open (``"requests"`` or
    ``"probe"``; the latest one wins, so a box that went down and came back is
    judged by its probe). While open, requests skip the endpoint untried.
    """

    def __init__(self, threshold: int, open_s: float) -> None:
        self.threshold = threshold
        self.open_s = open_s
        self.state = CLOSED
        self.failures = 0
        self.opened_at = 0.0
        self.opened_by: str | None = None  # REQUESTS or PROBE while not closed
        self._trial_out = False

    def allow(self) -> bool:
        """May a request go to a breaker that is not closed? Yes once per trial."""
        if self.state == CLOSED:
            return True
        if self.state == OPEN and time.monotonic() - self.opened_at >= self.open_s:
            self.state = HALF_OPEN
            self._trial_out = False
        if self.state == HALF_OPEN and not self._trial_out:
            self._trial_out = True
            return True
        return False

    def success(self) -> None:
        """A real request succeeded: closed, whatever opened it."""
        self._close()

    def failure(self) -> None:
        """A real request failed."""
        if self.state == OPEN:
            return  # a request from before it opened, answering late: nothing new
        self.failures += 1
        if self.state == HALF_OPEN or self.failures >= self.threshold:
            self._open(REQUESTS)

    def release(self) -> None:
        """A request on the endpoint ended. A trial that ended without a verdict
        (the client went away first) goes to the next request."""
        if self.state == HALF_OPEN:
            self._trial_out = False

    def trip(self) -> None:
        """Open at once: a health probe saw the server down."""
        self.failures = max(self.failures, self.threshold)
        self._open(PROBE)

    def probe_passed(self) -> None:
        """A health probe passed: close only what a failing probe opened."""
        if self.state != CLOSED and self.opened_by == PROBE:
            self._close()
        # Opened by requests: a passing /health says nothing about requests, so
        # the breaker waits for its half-open trial.

    def _open(self, by: str) -> None:
        self.state = OPEN
        self.opened_by = by
        self.opened_at = time.monotonic()
        self._trial_out = False

    def _close(self) -> None:
        self.state = CLOSED
        self.opened_by = None
        self.failures = 0
        self._trial_out = False
