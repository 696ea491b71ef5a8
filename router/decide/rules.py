"""The team's own routing rules (``routing.rules``), checked before the classifier.

A rule matches on what the proxy knows before reading the task: the client
key's name, a header, the model the client asked for, the system prompt
(substring or regular expression), the last user turn (substring), whether
tools are offered. All of a rule's conditions must hold; the first rule that matches decides, with the reason
``rule:<name>``. It gives a route, a backend or an intent (which then goes
where ``routing.intents`` sends that intent).

Examples: the marketing team's key goes to the cloud; background
title-generation requests (a recognisable system prompt) go to the local box.

Everything is compiled once at start-up (names resolved, regexes compiled),
so a rule costs a few dictionary lookups and at most one regex search over
the first ``SYSTEM_WINDOW`` characters of the system prompt. :class:`Rules`
is one step of the policy (router/decide/policy.py), after the client's override.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from router.config import RuleConfig
from router.decide.decision import Decision, Facts, Targets
from router.decide.reasons import Reason

SYSTEM_WINDOW = 4096  # characters of the system prompt a rule reads


class _Compiled(NamedTuple):
    name: str
    backend: str
    intent: str | None
    clients: frozenset[str] | None
    headers: tuple[tuple[str, str], ...]
    models: frozenset[str] | None
    system_contains: str | None
    system_regex: re.Pattern[str] | None
    user_contains: str | None
    tools: bool | None


class Rules:
    """The team's rules as a step: the first that matches decides (``rule:<name>``), taken
    as it is (no weighted split, no shadow mode: the team chose)."""

    reasons = (Reason.RULE,)
    final = True

    def __init__(self, rules: list[RuleConfig], targets: Targets) -> None:
        self.targets = targets
        self._rules = [_compile(rule, targets.backend_of, targets.intents) for rule in rules]
        self._reads_system = any(r.system_contains or r.system_regex for r in self._rules)
        self._reads_user = any(r.user_contains for r in self._rules)

    def __bool__(self) -> bool:
        return bool(self._rules)

    def decide(self, facts: Facts) -> Decision | None:
        if not self._rules:
            return None
        matched = self.match(facts.view, facts.body, facts.headers, facts.client)
        if matched is None:
            return None
        name, backend, intent = matched
        return self.targets.decision(intent, None, backend, Reason.RULE, name)

    def match(
        self, view: dict[str, Any], body: dict[str, Any], headers: Any, client: str | None
    ) -> tuple[str, str, str | None] | None:
        """``(rule name, backend, intent)`` of the first rule that matches, else None."""
        system = _system_text(view) if self._reads_system else ""
        user = _last_user_text(view) if self._reads_user else ""
        model = body.get("model")
        has_tools = bool(view.get("tools"))
        for rule in self._rules:
            if rule.clients is not None and client not in rule.clients:
                continue
            if rule.models is not None and model not in rule.models:
                continue
            if rule.tools is not None and rule.tools != has_tools:
                continue
            if rule.headers and not all(
                headers is not None and headers.get(name) == value for name, value in rule.headers
            ):
                continue
            if rule.system_contains is not None and rule.system_contains not in system:
                continue
            if rule.system_regex is not None and rule.system_regex.search(system) is None:
                continue
            if rule.user_contains is not None and rule.user_contains not in user:
                continue
            return rule.name, rule.backend, rule.intent
        return None


def _compile(rule: RuleConfig, backend_of: dict[str, str], intents: dict[str, str]) -> _Compiled:
    # The config validated the names; resolve them once here.
    if rule.intent is not None:
        backend = intents[rule.intent]
    else:
        backend = backend_of[rule.route or rule.backend or ""]
    match = rule.match
    return _Compiled(
        rule.name,
        backend,
        rule.intent,
        _names(match.client),
        tuple((k.lower(), v) for k, v in (match.header or {}).items()),
        _names(match.model),
        match.system_contains,
        re.compile(match.system_regex) if match.system_regex is not None else None,
        match.user_contains,
        match.tools,
    )


def _names(value: str | list[str] | None) -> frozenset[str] | None:
    if value is None:
        return None
    return frozenset([value] if isinstance(value, str) else value)


def _last_user_text(view: dict[str, Any]) -> str:
    """The head of the last user turn, whatever its content shape."""
    messages = view.get("messages")
    for message in reversed(messages) if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content[:SYSTEM_WINDOW]
    if isinstance(content, list):
        # Join only up to the window: Claude Code's system blocks are ~30 KB of text.
        texts: list[str] = []
        size = 0
        for part in content:
            text = part.get("text") if isinstance(part, dict) else None
            if isinstance(text, str):
                texts.append(text)
                size += len(text)
                if size >= SYSTEM_WINDOW:
                    break
        return "".join(texts)[:SYSTEM_WINDOW]
    return ""


def _system_text(view: dict[str, Any]) -> str:
    """The head of the system (or developer) prompt, whatever its content shape."""
    messages = view.get("messages")
    for message in messages[:4] if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("role") in ("system", "developer"):
            return _text_of(message.get("content"))
    return ""
