"""The switch cost: a turn of a session that would change route weighs what the move costs.

An agent's turn resends its whole history. Where the session's last turn ran holds that
history: vLLM in its prefix cache, a cloud provider in its prompt cache. Moving the
session pays for all of it once more: into the cloud, its input price on the uncached
history; back onto the box, a re-prefill of minutes at ~700 tokens/s. Deciding each
turn alone ignores that, so a session whose turns sit near the classifier's boundary
flips back and forth and pays each time.

The rule: a classified turn (``classifier``, ``tool_loop``, ``low_confidence``) whose
route differs from where its session's last turn ran moves only when the classifier's
confidence is at least ``cost / (cost + half)``: ``routing.switch_cost.half_usd`` for a
move into the cloud, ``half_s`` for one onto the box. A cheap move (a short history)
needs little confidence, an expensive one a lot; the other steps' decisions (rules, the
client's choice, media, context overflow) are never held back. A turn with no session
history (its first, or an unknown session) is decided exactly as before.
"""

from __future__ import annotations

from router.config import Config
from router.decide.decision import Decision, Facts, Targets
from router.decide.reasons import Reason

# Decisions by the classifier: the ones a move's cost may hold back.
_CLASSIFIED = frozenset({Reason.CLASSIFIER.text(), Reason.TOOL_LOOP.text(), Reason.LOW_CONFIDENCE.text()})


class SwitchCost:
    reasons = (Reason.SWITCH_COST,)

    def __init__(self, targets: Targets, config: Config) -> None:
        self.targets = targets
        self.rule = config.routing.switch_cost
        self.input_price = {name: b.price.input_per_mtok for name, b in config.backends.items()}
        self.prefill_tps = {name: b.prefill_tps for name, b in config.backends.items()}

    def cost_weight(self, decision: Decision, tokens: int) -> float:
        """What moving ``tokens`` of history to ``decision``'s backend costs, as the confidence
        the move needs: cost / (cost + half), in [0, 1)."""
        backend = decision.backend
        if decision.route == "cloud":
            cost, half = tokens * self.input_price.get(backend, 0.0) / 1e6, self.rule.half_usd
        else:
            cost, half = tokens / self.prefill_tps.get(backend, 700.0), self.rule.half_s
        return cost / (cost + half)

    def adjust(self, decision: Decision, facts: Facts) -> Decision:
        seen = facts.seen
        if (
            seen is None
            or not self.rule.enabled
            or decision.route == seen.route
            or decision.reason not in _CLASSIFIED
        ):
            return decision
        if (decision.confidence or 0.0) >= self.cost_weight(decision, seen.tokens):
            return decision
        targets = self.targets
        stay = seen.backend if targets.route_of.get(seen.backend) == seen.route else None
        stay = stay or targets.backend_of.get(seen.route)
        if stay is None:
            return decision  # the session's last route is no longer configured
        return targets.decision(decision.intent, decision.confidence, stay, Reason.SWITCH_COST)
