"""Which backend minted a Responses id, so that ``previous_response_id`` goes back to it.

A stored response lives in one server (vLLM keeps it in that process; OpenAI
in its store): a follow-up turn that names it can only be answered there. The
map is bounded and in process; the usage rows (``usage.response_id``) are the
record that survives a restart, and the newest of them are read back at
start-up, off the request path.

With several replicas (``state:``), each minted id is also written to Redis
with a TTL, and a turn naming an id this process does not know is looked up
there by :meth:`ResponseOwners.fetch` before the policy runs: the policy itself
never waits on I/O, and only such turns pay the round trip.

**An id belongs to the key that minted it.** Every backend keeps stored responses
under the proxy's own upstream key, so without a check any client key that learnt
an id could continue another key's conversation (and read it back). Each id is kept
with the client key's name that minted it (in process, in Redis and in the usage
rows); a turn from another key naming it gets the same 404 an unknown id gets
(:func:`not_found`), never a hint that the id exists.
"""

from __future__ import annotations

import logging
from collections import OrderedDict

import sqlalchemy as sa

from router.config import DatabaseConfig
from router.errors import ProxyError
from router.forward.shared import IN_PROCESS_OWNERS, Minted, OwnerStore

log = logging.getLogger("offload.response_ids")


def not_found(response_id: str) -> ProxyError:
    """What a turn naming an id it may not continue gets: vLLM's answer for an unknown id,
    word for word, whoever minted it."""
    return ProxyError(
        404,
        f"Response with id '{response_id}' not found.",
        code="response_not_found",
        param="previous_response_id",
        type="invalid_request_error",
    )


class ResponseOwners:
    """A bounded map ``response id → (backend, client key)``; the oldest entries go first."""

    def __init__(self, capacity: int = 100_000, store: OwnerStore = IN_PROCESS_OWNERS) -> None:
        self.capacity = capacity
        self._owners: OrderedDict[str, Minted] = OrderedDict()
        self._store = store  # the other replicas' ids, when shared

    def remember(
        self, response_id: str, backend: str, client: str | None, session: str | None = None
    ) -> None:
        """A backend minted ``response_id`` for ``client`` in ``session``: here, and for the
        other replicas."""
        minted = Minted(backend, client, session)
        self._keep(response_id, minted)
        self._store.put(response_id, minted)

    async def fetch(self, response_id: str) -> None:
        """Make :meth:`owner` know an id another replica minted (a no-op when this process
        knows it, or nothing is shared)."""
        if response_id in self._owners:
            return
        minted = await self._store.get(response_id)
        if minted is not None:
            self._keep(response_id, minted)

    def _keep(self, response_id: str, minted: Minted) -> None:
        self._owners[response_id] = minted
        if len(self._owners) > self.capacity:
            self._owners.popitem(last=False)

    def owner(self, response_id: str, client: str | None) -> str | None:
        """The backend that stores ``response_id``, if ``client`` minted it."""
        minted = self._owners.get(response_id)
        return minted.backend if minted is not None and minted.client == client else None

    def session(self, response_id: str, client: str | None) -> str | None:
        """The session ``response_id`` was minted in, if ``client`` minted it: a turn that
        continues it continues that session."""
        minted = self._owners.get(response_id)
        return minted.session if minted is not None and minted.client == client else None

    def foreign(self, response_id: str, client: str | None) -> bool:
        """Another key minted ``response_id``: ``client`` gets :func:`not_found`."""
        minted = self._owners.get(response_id)
        return minted is not None and minted.client != client

    def __len__(self) -> int:
        return len(self._owners)

    def load(self, database: DatabaseConfig, known_backends: set[str]) -> int:
        """Read the newest minted ids back from the usage rows (blocking: run it in a thread)."""
        if not database.enabled:
            return 0
        from router.ledger.db import make_engine  # the database layer is only needed here

        try:
            engine = make_engine(database.url, pooled=False)
            query = sa.text(
                "SELECT response_id, backend, client FROM usage WHERE response_id IS NOT NULL "
                "ORDER BY started_at DESC LIMIT :n"
            )
            with engine.connect() as conn:
                rows = conn.execute(query, {"n": self.capacity}).all()
            engine.dispose()
        except sa.exc.SQLAlchemyError as exc:
            log.warning("response ids not restored from the database: %s", type(exc).__name__)
            return 0
        for response_id, backend, client in reversed(rows):
            if backend in known_backends:
                self._keep(response_id, Minted(backend, client))  # in Redis already, if it is shared
        return len(rows)
