"""Idle shadow runs: evidence for bringing an intent home, gathered on spare local capacity.

A cloud-bound request of an intent named in ``routing.shadow_runs.intents`` is answered by
the cloud as usual. When the local box has more than ``reserve_slots`` free slots, a
sampled share of those requests is also sent, in the background and not streamed, to a
local arm (for example ``local-thinking``, a variant of ``local`` with thinking on). Its
answer is judged against the cloud's (``router/shadow/agreement.py``) and stored as a usage row of
its own, ``shadow_of`` the real request: ``offload compare`` reads the pairs.

What keeps it harmless:

* the client's answer never waits for it or changes: the copy runs beside the real request;
* it takes only idle slots (never the last ``reserve_slots``), never while the box queues
  or its breaker is not closed, and real traffic that needs a slot cancels it at once
  (``Backend.acquire``), which frees the slot on vLLM too;
* it never counts toward the client's limits or the month's traffic, never reaches a
  backend the client's key may not use, and is bounded per minute and in stored text;
* ``POST /offload/state {"shadow_runs": false}`` (admin) stops it at once, in-flight copies
  included; ``routing.shadow_runs.enabled`` is the setting at start-up.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from router.config import ShadowRunsConfig
from router.decide.policy import Decision
from router.decide.reasons import Reason
from router.dialects import Dialect
from router.forward.backends import Pool, Unavailable
from router.forward.call import Call, Outcome, Served
from router.forward.proxy import Forwarder
from router.forward.upstream import UpstreamFailure
from router.ledger.models import UsageRow
from router.ledger.rows import usage_row
from router.shadow.agreement import judge

log = logging.getLogger("offload.shadow")

# Output bounds by API: the copy gets one when the client's request has none.
_OUTPUT_BOUND = {"chat": "max_tokens", "completions": "max_tokens", "responses": "max_output_tokens"}


class ShadowRuns:
    def __init__(
        self,
        config: ShadowRunsConfig,
        pool: Pool,
        forwarder: Forwarder,
        record: Callable[[UsageRow], None],
        count: Callable[[str, str], None],
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.pool = pool
        self.forwarder = forwarder
        self.record = record  # straight to accounting: not the client's traffic, limits or metrics
        self.count = count  # offload_shadow_runs_total{arm, outcome}
        self.enabled = config.enabled
        self._rng = rng or random.Random()
        self._clock = clock
        self._window_start = clock()
        self._window_runs = 0
        self._tasks: set[asyncio.Task[None]] = set()

    def arm_for(self, decision: Decision, dialect: Dialect, allowed: frozenset[str] | None) -> str | None:
        """The arm a request will be copied to once answered (sampled now), or None.
        Never blocks, never raises."""
        shadow = self.config.intents.get(decision.intent or "") if self.enabled else None
        if shadow is None or decision.route != "cloud":
            return None
        backend = self.pool.backends.get(shadow.arm)
        if backend is None or dialect.api not in backend.apis or dialect.endpoint == "count_tokens":
            return None
        if allowed is not None and backend.name not in allowed and backend.route not in allowed:
            return None  # never a backend the key may not use
        if self._rng.random() >= shadow.rate or not self._within_rate():
            return None
        return backend.name

    def start(self, call: Call, outcome: Outcome) -> None:
        """The client has its answer (``outcome``): copy the call to its arm, in the
        background. The copy's own work never shares a moment with the real request."""
        if call.shadow_arm is None or not self.enabled:
            return  # none sampled, or switched off since: nothing runs, nothing is stored
        real_text = outcome.text if outcome.status < 400 else None
        task = asyncio.create_task(self._run(call, call.shadow_arm, real_text))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def switch(self, enabled: bool) -> None:
        """Turn shadow runs on or off at once; off also cancels the copies in flight."""
        self.enabled = enabled
        if not enabled:
            for task in list(self._tasks):
                task.cancel()

    async def stop(self) -> None:
        self.switch(False)
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _within_rate(self) -> bool:
        now = self._clock()
        if now - self._window_start >= 60.0:
            self._window_start, self._window_runs = now, 0
        if self._window_runs >= self.config.max_per_minute:
            return False
        self._window_runs += 1
        return True

    async def _run(self, call: Call, arm: str, real_text: str | None) -> None:
        backend = self.pool.backends[arm]
        this = asyncio.current_task()
        assert this is not None
        facts = call.facts._replace(
            request_id=os.urandom(16).hex(),
            started_at=datetime.now(UTC),
            t0=time.perf_counter(),
            stream=False,
            prompt_text=None,
        )
        served = Served(arm, "local")
        error: str | None
        try:
            backend.server.shadows.append(this)
            try:
                status, whole = await self.forwarder.answer_idle(
                    call, backend, self._copy(call), self.config.reserve_slots
                )
            finally:
                backend.server.shadows.remove(this)
        except UpstreamFailure as exc:
            status, whole, error, outcome = 502, None, f"shadow_{exc.reason}", "error"
        except Unavailable:
            self.count(arm, "skipped_busy")  # no idle slot: nothing ran, nothing to store
            return
        except asyncio.CancelledError:
            # Real traffic took the slot back, or shadow runs were switched off.
            status, whole, error, outcome = 499, None, "shadow_yielded", "yielded"
        except Exception as exc:  # noqa: BLE001 - a shadow run must never surface anywhere
            status, whole, error, outcome = 502, None, f"shadow_{type(exc).__name__}", "error"
        else:
            error, outcome = (f"upstream_{status}", "error") if status >= 400 else (None, "completed")
        local_text = whole.text if whole is not None else None
        result = Outcome(
            status=status,
            latency_ms=(time.perf_counter() - facts.t0) * 1000,
            served=served,
            usage=whole.usage if whole is not None else None,
            billed=False,  # no usage reported: a copy's tokens are never estimated
            error_type=error,
            text=local_text[: self.config.max_text_bytes] if local_text is not None else None,
        )
        agreement = judge(call.decision.intent, real_text, local_text) if outcome == "completed" else None
        self.record(
            usage_row(
                facts,
                _shadow_decision(call.decision, arm),
                result,
                shadow_of=call.facts.request_id,
                agreement=agreement,
            )
        )
        self.count(arm, outcome)

    def _copy(self, call: Call) -> dict[str, Any]:
        """The client's request, not streamed, with an output bound if it had none."""
        body = {k: v for k, v in call.body.items() if k not in ("stream", "stream_options")}
        bound = _OUTPUT_BOUND.get(call.dialect.api)
        if bound is not None and not any(k in body for k in (bound, "max_completion_tokens")):
            body[bound] = self.config.max_output_tokens
        return body


def _shadow_decision(real: Decision, arm: str) -> Decision:
    """A copy's decision: the real request's intent, sent to the arm on the local route."""
    return Decision(real.intent, real.confidence, "local", arm, Reason.SHADOW_RUN.text(), arm=arm)
