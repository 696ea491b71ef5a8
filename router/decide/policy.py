"""Where a request goes: an ordered list of steps, explicit choices first, the classifier last.

Every request gets a :class:`Decision`. Each step (router/decide/steps.py, and the
team's rules in router/decide/rules.py) reads the already-parsed body, through its
API's dialect as one chat-shaped view, and decides or passes the request to
the next; the classifier, last, always decides. A decision by content then
goes through the adjustments: a weighted split's arm, shadow mode. Nothing
here does I/O, so deciding costs microseconds.

The order is :attr:`Policy.steps`; each decision's ``reason`` says which step
made it (router/decide/reasons.py, where every reason is listed and explained).
"""

from __future__ import annotations

import logging
from typing import Any

from router.config import Config
from router.decide.decision import Adjustment, Decision, Facts, Step, Targets
from router.decide.reasons import Reason
from router.decide.rules import Rules
from router.decide.steps import (
    Classification,
    Classifier,
    Classify,
    ContextOverflow,
    Embeddings,
    Media,
    Override,
    Pinned,
    ShadowMode,
    Split,
    ToolLoop,
)
from router.decide.switch import SwitchCost
from router.dialects import CHAT, Dialect
from router.forward.response_ids import ResponseOwners
from router.sessions import Seen

log = logging.getLogger("offload.policy")

PINNED = (
    Reason.PREVIOUS_RESPONSE
)  # the reason of a decision that must not fall back (router/forward/proxy.py)


class Policy:
    """Steps → Decision, configured once at start-up."""

    def __init__(
        self, config: Config, classifier: Classifier | None = None, owners: ResponseOwners | None = None
    ) -> None:
        self.config = config
        self.classifier = classifier
        self.classifier_version = classifier.version if classifier else None
        self.owners = owners if owners is not None else ResponseOwners()
        routing = config.routing
        targets = self._targets = Targets(config)
        local = config.backends.get(targets.backend_of.get("local", ""))
        classification = Classification(classifier, targets, routing)
        # The policy, in its order: the first step with a decision decides.
        self.steps: tuple[Step, ...] = (
            Embeddings(targets, config),  # not classified: the header's or the first embeddings backend
            Override(targets),  # the client's x-offload-route header or a route name as model
            Rules(routing.rules, targets),  # the team's routing.rules
            Pinned(targets, self.owners),  # previous_response_id: where that response lives
            Media(targets, local),  # what the local model cannot read: the cloud
            ContextOverflow(targets, local),  # what the local box cannot hold: the cloud
            ToolLoop(classification, targets, routing),  # a tool-loop turn: its task's decision
            Classify(classification),  # the classifier's intent, via routing.intents
        )
        # What a decision by content (a step that is not final) then goes through, in order.
        self.adjustments: tuple[Adjustment, ...] = (
            SwitchCost(targets, config),  # a session's route change weighs what the move costs
            Split(targets, config),
            ShadowMode(targets, routing),
        )

    def decide(
        self,
        body: dict[str, Any],
        headers: Any = None,
        body_size: int = 0,
        dialect: Dialect = CHAT,
        client: str | None = None,
        session: str | None = None,
        seen: Seen | None = None,
    ) -> Decision:
        """The decision for a request body (already parsed) of ``dialect``'s API; ``session``
        and ``seen`` as the edge found them (router/sessions.py), else worked out here."""
        facts = Facts(body, headers, body_size, dialect, client, session, seen)
        for step in self.steps:
            decision = step.decide(facts)
            if decision is not None:
                if not step.final:
                    for adjustment in self.adjustments:
                        decision = adjustment.adjust(decision, facts)
                return decision
        raise AssertionError("the last step always decides")

    def knows_model(self, model: str) -> bool:
        """Is ``model`` a name the proxy routes by (``auto``, a route, a backend, a served model)?"""
        return model == "auto" or model in self._targets.backend_of


def load_classifier(path: str | None) -> Classifier | None:
    """The packaged intent model (or ``path``); None if it cannot be loaded."""
    try:
        from classifier import IntentModel
    except ImportError:
        log.warning("classifier package not available: every request takes routing.default")
        return None
    try:
        return IntentModel.load(path)
    except FileNotFoundError:
        if path:
            raise
        log.warning("no packaged classifier weights: every request takes routing.default")
        return None
