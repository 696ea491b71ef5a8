"""What a routing decision is, and what each step of the policy reads and answers.

The policy (router/decide/policy.py) is an ordered list of steps. A step reads one
request's :class:`Facts` and returns a :class:`Decision` or None (it passes the
request to the next step). :class:`Targets` holds the configured names the
steps resolve to, and is the one place a Decision is made. A decision by
content then goes through each :class:`Adjustment`.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from router.config import Config
from router.decide.reasons import Reason
from router.dialects import Dialect
from router.sessions import Seen, session_of


class Decision(NamedTuple):
    # Immutable like a frozen dataclass, and built in C: 0.24 us against 0.79 us, on a path
    # that makes one per request (bench/README.md).
    intent: str | None
    confidence: float | None
    route: str  # "local" | "cloud": the kind of backend chosen
    backend: str  # the configured backend name
    reason: str  # a Reason's plain string: classifier, media, rule:<name>, ... (router/decide/reasons.py)
    shadow: Decision | None = None  # shadow mode: what the policy would have chosen
    arm: str | None = None  # the arm a weighted split chose (routing.intents: {a: w, b: w})

    def as_dict(self) -> dict[str, Any]:
        out = self._asdict()
        out["shadow"] = self.shadow.as_dict() if self.shadow else None
        return out


_UNKNOWN = "\x00unknown"  # a Facts' session not worked out yet (None: the request has none)


class Facts:
    """One request as the steps read it: the parsed body of ``dialect``'s API, its headers,
    its size in bytes, the client key's name, its session (router/sessions.py) and where
    that session's last turn ran (``seen``, None for its first). The dialect's chat-shaped
    view and the session are made on first use and once: a request a step decides by its
    header or model never needs them."""

    __slots__ = ("body", "headers", "body_size", "dialect", "client", "seen", "_view", "_session")

    def __init__(
        self,
        body: dict[str, Any],
        headers: Any,
        body_size: int,
        dialect: Dialect,
        client: str | None,
        session: str | None = None,
        seen: Seen | None = None,
    ) -> None:
        self.body = body
        self.headers = headers
        self.body_size = body_size
        self.dialect = dialect
        self.client = client
        self.seen = seen
        self._view: dict[str, Any] | None = None
        self._session: str | None = session if session is not None else _UNKNOWN

    @property
    def session(self) -> str | None:
        session = self._session
        if session is _UNKNOWN:
            session = self._session = session_of(self.dialect.api, self.body, self.headers)
        return session

    @property
    def view(self) -> dict[str, Any]:
        view = self._view
        if view is None:
            view = self._view = self.dialect.view(self.body)
        return view

    @property
    def messages(self) -> list[Any] | None:
        """The view's turns, or None when it has none in a list."""
        messages = self.view.get("messages")
        return messages if isinstance(messages, list) else None

    def header(self, name: str) -> str | None:
        return self.headers.get(name) if self.headers is not None else None


class Step(Protocol):
    """One check of the policy: a Decision, or None to pass the request to the next step."""

    @property
    def reasons(self) -> tuple[Reason, ...]:
        """What its decisions may say, the usual one first (tests/test_reasons.py holds the
        enumeration, and so the README's table, to the order of the steps)."""

    @property
    def final(self) -> bool:
        """True: its decision is taken as it is (the client's, the team's or the stored
        state's choice). False: a decision by content, which the adjustments then see."""

    def decide(self, facts: Facts) -> Decision | None: ...


class Adjustment(Protocol):
    """What a decision by content then goes through (a weighted split, shadow mode)."""

    @property
    def reasons(self) -> tuple[Reason, ...]:
        """What its decisions may say instead."""

    def adjust(self, decision: Decision, facts: Facts) -> Decision: ...


class Targets:
    """The config's route and backend names, resolved once (resolving them per request through
    the config's pydantic properties adds up), and the one place a Decision is made."""

    def __init__(self, config: Config) -> None:
        self.backend_of = config.route_table()  # route, backend or served model name -> backend
        self.route_of = {name: b.route_name for name, b in config.backends.items()}
        self.default = self.backend_of[config.routing.default]
        self.cloud = self.backend_of.get("cloud", self.default)
        self.intents = config.intent_backends()

    def of_intent(self, intent: str | None) -> str:
        """The backend ``routing.intents`` sends ``intent`` to, else ``routing.default``'s."""
        return self.intents.get(intent or "", self.default)

    def decision(
        self,
        intent: str | None,
        confidence: float | None,
        backend: str,
        reason: Reason,
        name: str | None = None,
        shadow: Decision | None = None,
    ) -> Decision:
        """A decision for ``backend``; ``name`` is what a named reason matched (``rule:<name>``)."""
        return Decision(intent, confidence, self.route_of[backend], backend, reason.text(name), shadow)
