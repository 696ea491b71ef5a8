"""Which endpoint of a backend a session's turn goes to: the one that holds its prefix.

A backend with several endpoints (two Sparks) used to take the endpoint with the fewest
requests in flight, so consecutive turns of one agent session landed on different
boxes and each re-prefilled the whole history. Now a session has a **home**:

* a session whose last turn ran on an endpoint of this backend (``home``) goes back
  there while that endpoint is up and has a free slot. It moves only when its box is
  down or full, or when admission refuses it there (``max_ttft_s``, the KV cache): the
  forwarder then tries the backend's next endpoint before spilling to the cloud;
* a session new to this backend (or whose home cannot take it) goes by **consistent
  hashing with bounded load**: the endpoints in the session's rendezvous order (each
  endpoint scored by a hash of the session and its URL, highest first), the first whose
  load is below ``ceil(factor × (in flight + 1) / endpoints)``. So no box takes more
  than its share of new sessions, and adding or removing a box moves only the sessions
  that hashed to it.

The order is a pure function of the session and the URLs: every replica computes the
same one, and the loads are the shared slot counts when ``state:`` is set. Where the
session was last seen comes from :class:`router.sessions.Sessions`, also shared.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar


class Located(Protocol):
    @property
    def url(self) -> str: ...


E = TypeVar("E", bound=Located)


def _score(session: str, url: str) -> int:
    digest = hashlib.blake2b(f"{session}\x00{url}".encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(digest.digest(), "big")


def rendezvous(session: str, endpoints: Sequence[E]) -> list[E]:
    """``endpoints`` in ``session``'s order of preference (highest random weight first)."""
    return sorted(endpoints, key=lambda e: _score(session, e.url), reverse=True)


def choose(
    session: str,
    home: str | None,
    open_: Sequence[E],
    in_use: Callable[[E], int],
    factor: float,
) -> E:
    """The endpoint for a turn of ``session`` among ``open_`` (up, with a free slot, not
    refused for this request): its ``home`` if open, else the first in its rendezvous
    order below the bound, else the least loaded."""
    for endpoint in open_:
        if endpoint.url == home:
            return endpoint
    total = sum(in_use(e) for e in open_)
    bound = math.ceil(factor * (total + 1) / len(open_))
    for endpoint in rendezvous(session, open_):
        if in_use(endpoint) < bound:
            return endpoint
    return min(open_, key=in_use)
