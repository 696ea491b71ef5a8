"""Idle shadow runs: evidence for bringing an intent home, gathered on spare local capacity.

A cloud-bound request of an intent named in ``routing.shadow_runs.intents`` is answered by
the cloud as usual. When the local box has more than ``reserve_slots`` free slots, a
sampled share of those requests is also sent, in the background and not streamed, to a
local arm (for example ``local-thinking``, a variant of ``local`` with thinking on). Its
answer is judged against the cloud's (``router/agreement.py``) and stored as a usage row of
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

from router.accounting import UsageRow
from router.agreement import judge
from router.backends import Pool, Unavailable
from router.config import ShadowRunsConfig
from router.proxy import Call, Forwarder, UpstreamFailure
from router.reasons import Reason

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

    def consider(self, call: Call) -> None:
        """Start a shadow run for ``call`` if it qualifies; never blocks, never raises."""
        decision = call.decision
        shadow = self.config.intents.get(decision.intent or "") if self.enabled else None
        if shadow is None or decision.route != "cloud" or call.row.shadow_of is not None:
            return
        backend = self.pool.backends.get(shadow.arm)
        if backend is None or call.dialect.api not in backend.apis or call.dialect.endpoint == "count_tokens":
            return
        if (
            call.allowed is not None
            and backend.name not in call.allowed
            and backend.route not in call.allowed
        ):
            return  # never a backend the key may not use
        if self._rng.random() >= shadow.rate or not self._within_rate():
            return
        call.answer = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._run(call, backend.name))
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

    async def _run(self, call: Call, arm: str) -> None:
        backend = self.pool.backends[arm]
        this = asyncio.current_task()
        assert this is not None
        # Start once the client has its whole answer: the copy's own work (adapting and
        # sending the body, reading the box's answer) never shares a moment with it.
        try:
            real_text = await self._real_answer(call)
        except asyncio.CancelledError:
            return  # switched off before the copy began: nothing ran, nothing to store
        row = self._row(call, arm)
        t0 = time.perf_counter()
        local_text: str | None = None
        outcome = "completed"
        try:
            backend.server.shadows.append(this)
            try:
                status, whole = await self.forwarder.answer_idle(
                    call, backend, self._copy(call), self.config.reserve_slots
                )
            finally:
                backend.server.shadows.remove(this)
            row.status = status
            if whole.usage is not None:
                row.prompt_tokens, row.completion_tokens, row.cached_tokens, row.reasoning_tokens = (
                    whole.usage
                )
            if status >= 400:
                row.error_type, outcome = f"upstream_{status}", "error"
            local_text = whole.text
        except UpstreamFailure as exc:
            row.status, row.error_type, outcome = 502, f"shadow_{exc.reason}", "error"
        except Unavailable:
            self.count(arm, "skipped_busy")  # no idle slot: nothing ran, nothing to store
            return
        except asyncio.CancelledError:
            # Real traffic took the slot back, or shadow runs were switched off.
            row.status, row.error_type, outcome = 499, "shadow_yielded", "yielded"
        except Exception as exc:  # noqa: BLE001 - a shadow run must never surface anywhere
            row.status, row.error_type, outcome = 502, f"shadow_{type(exc).__name__}", "error"
        row.latency_ms = (time.perf_counter() - t0) * 1000
        if outcome == "completed":
            row.agreement = judge(call.decision.intent, real_text, local_text)
        if call.row.prompt_text is not None and local_text is not None:  # storage follows store_text
            row.completion_text = local_text[: self.config.max_text_bytes]
        self.record(row)
        self.count(arm, outcome)

    @staticmethod
    async def _real_answer(call: Call) -> str | None:
        if call.answer is None:
            return None
        try:
            return await asyncio.wait_for(asyncio.shield(call.answer), timeout=600)
        except TimeoutError:
            return None

    def _copy(self, call: Call) -> dict[str, Any]:
        """The client's request, not streamed, with an output bound if it had none."""
        body = {k: v for k, v in call.body.items() if k not in ("stream", "stream_options")}
        bound = _OUTPUT_BOUND.get(call.dialect.api)
        if bound is not None and not any(k in body for k in (bound, "max_completion_tokens")):
            body[bound] = self.config.max_output_tokens
        return body

    @staticmethod
    def _row(call: Call, arm: str) -> UsageRow:
        real = call.row
        return UsageRow(
            request_id=os.urandom(16).hex(),
            started_at=datetime.now(UTC),
            endpoint=real.endpoint,
            api=real.api,
            client=real.client,
            model_requested=real.model_requested,
            stream=False,
            intent=real.intent,
            confidence=real.confidence,
            reason=Reason.SHADOW_RUN.text(),
            decided_route="local",
            decided_backend=arm,
            backend=arm,
            route="local",
            classifier_version=real.classifier_version,
            arm=arm,
            shadow_of=real.request_id,
        )
