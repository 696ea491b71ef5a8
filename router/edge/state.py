"""Everything one request needs, built once from the config, and where a request ends.

:class:`ProxyState` owns the long-lived parts (keys, limits, the policy, the backend pool,
the forwarder, the recorder, metrics, shadow runs), starts and stops them with the app's
lifespan, and :meth:`ProxyState.finish` is where every forwarded request ends: its one
usage row built, counted, queued, and its tokens settled against its key's limits.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from router.config import Config
from router.decide.policy import Classifier, Decision, Policy
from router.dialects import Dialect
from router.edge.access import log_request
from router.edge.auth import Caller, KeyStore
from router.edge.limits import RateLimits
from router.edge.metrics import Metrics
from router.errors import SecretMask
from router.forward.backends import Pool
from router.forward.call import Call, Outcome
from router.forward.proxy import Forwarder
from router.forward.response_ids import ResponseOwners
from router.forward.sharing import shared_state
from router.ledger.rows import usage_row
from router.ledger.writer import UsageRecorder
from router.sessions import Seen, Sessions
from router.shadow.runs import ShadowRuns

log = logging.getLogger("offload.app")


class ProxyState:
    """Everything one request needs, built once from the config (``app.state.proxy``)."""

    def __init__(self, config: Config, classifier: Classifier | None, recorder: UsageRecorder) -> None:
        self.config = config
        self.keys = KeyStore(config.auth)
        # Slots, limits and response ids: in process, or shared by the replicas (state:).
        self.shared = shared_state(config.state)
        self.limits = RateLimits([*config.auth.keys, *config.auth.admin_keys], store=self.shared.windows)
        self.owners = ResponseOwners(store=self.shared.owners)
        self.sessions = Sessions(store=self.shared.sessions)  # where each session last ran
        self.policy = Policy(config, classifier, self.owners)
        self.pool = Pool(config, self.shared.slots)
        self.recorder = recorder
        self.metrics = Metrics(self.pool, recorder)
        secrets = [b.api_key for b in config.backends.values()]
        secrets += [k.key for k in (*config.auth.keys, *config.auth.admin_keys)]
        self.forwarder = Forwarder(
            self.pool,
            config.routing.capacity,
            self.finish,
            self.metrics.fallback,
            SecretMask(secrets),
            self.owners,
        )
        self.shadows = ShadowRuns(
            config.routing.shadow_runs, self.pool, self.forwarder, recorder.record, self.metrics.shadow_run
        )
        self._restoring: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.recorder.start()
        await self.shared.start()  # never waits long: a Redis that is away means fallback
        await self.pool.start()
        self._restoring = asyncio.create_task(self._restore_response_ids())

    async def stop(self) -> None:
        if self._restoring is not None:
            self._restoring.cancel()
        await self.shadows.stop()
        await self.pool.stop()
        await self.shared.stop()
        await self.recorder.stop()

    def decide(
        self,
        body: dict[str, Any],
        headers: Mapping[str, str],
        size: int,
        dialect: Dialect,
        caller: Caller | None = None,
        session: str | None = None,
        seen: Seen | None = None,
    ) -> Decision:
        t = time.perf_counter()
        client = caller.name if caller else None
        decision = self.policy.decide(body, headers, size, dialect, client, session, seen)
        self.metrics.decision.observe(time.perf_counter() - t)
        return decision

    def finish(self, call: Call, outcome: Outcome) -> None:
        """A request is over: its row built, counted and queued (never waits on the
        database), the tokens admission held for it settled with what it really used,
        and its shadow run (if it has one) started."""
        row = usage_row(call.facts, call.decision, outcome)
        log_request(row, outcome.detail)
        self.metrics.observe(row)
        self.recorder.record(row)
        used = row.prompt_tokens + row.completion_tokens
        reservation = call.reservation
        if reservation is not None and reservation.name is not None and reservation.name == row.client:
            self.limits.settle(reservation, used)
        else:
            self.limits.add_tokens(row.client, used)
        self._remember_session(call, outcome, row.prompt_tokens + row.completion_tokens)
        self.shadows.start(call, outcome)

    def _remember_session(self, call: Call, outcome: Outcome, tokens: int) -> None:
        """Where an answered turn ran is where its session's next turn finds its prefix
        cached (and what the switch-cost rule weighs)."""
        served, session = outcome.served, call.facts.session
        if served is None or served.endpoint is None or session is None or outcome.status >= 400:
            return
        before = call.seen
        box = before.box if before is not None else None
        if served.route == "local":
            if box is not None and box != served.endpoint:
                self.metrics.session_moves.labels(served.backend).inc()
            box = served.endpoint
        seen = Seen(served.route, served.backend, tokens, box)
        self.sessions.remember(call.facts.client, session, seen)

    async def _restore_response_ids(self) -> None:
        """Who minted which response id, from the newest usage rows (a thread: not the loop)."""
        loaded = await asyncio.to_thread(self.owners.load, self.config.database, set(self.pool.backends))
        if loaded:
            log.info("restored %d response ids from the usage rows", loaded)
