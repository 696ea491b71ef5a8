"""Which shared state a process uses: its own counts, or Redis's when ``state:`` is set."""

from __future__ import annotations

from router.config import StateConfig
from router.forward.shared import InProcess, SharedState


def shared_state(config: StateConfig | None) -> SharedState:
    """In process without a ``state:`` key, else through Redis (imported only then)."""
    if config is None:
        return InProcess()
    from router.forward.shared_redis import RedisState

    return RedisState(config)
