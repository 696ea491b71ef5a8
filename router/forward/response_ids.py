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
"""

from __future__ import annotations

import logging
from collections import OrderedDict

import sqlalchemy as sa

from router.config import DatabaseConfig
from router.forward.shared import IN_PROCESS_OWNERS, OwnerStore

log = logging.getLogger("offload.response_ids")


class ResponseOwners:
    """A bounded map ``response id → backend name``; the oldest entries go first."""

    def __init__(self, capacity: int = 100_000, store: OwnerStore = IN_PROCESS_OWNERS) -> None:
        self.capacity = capacity
        self._owners: OrderedDict[str, str] = OrderedDict()
        self._store = store  # the other replicas' ids, when shared

    def remember(self, response_id: str, backend: str) -> None:
        """A backend minted ``response_id``: here, and for the other replicas."""
        self._keep(response_id, backend)
        self._store.put(response_id, backend)

    async def fetch(self, response_id: str) -> None:
        """Make :meth:`owner` know an id another replica minted (a no-op when this process
        knows it, or nothing is shared)."""
        if response_id in self._owners:
            return
        backend = await self._store.get(response_id)
        if backend is not None:
            self._keep(response_id, backend)

    def _keep(self, response_id: str, backend: str) -> None:
        self._owners[response_id] = backend
        if len(self._owners) > self.capacity:
            self._owners.popitem(last=False)

    def owner(self, response_id: str) -> str | None:
        return self._owners.get(response_id)

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
                "SELECT response_id, backend FROM usage WHERE response_id IS NOT NULL "
                "ORDER BY started_at DESC LIMIT :n"
            )
            with engine.connect() as conn:
                rows = conn.execute(query, {"n": self.capacity}).all()
            engine.dispose()
        except sa.exc.SQLAlchemyError as exc:
            log.warning("response ids not restored from the database: %s", type(exc).__name__)
            return 0
        for response_id, backend in reversed(rows):
            if backend in known_backends:
                self._keep(response_id, backend)  # in Redis already, if it is shared
        return len(rows)
