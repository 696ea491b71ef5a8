"""From the evidence, a proposed ``routing.intents``: never applied, always with its reasons.

An intent's evidence is the results of the categories that map to it (``gate.categories``:
prose and writing both to ``writing``). It goes to a local backend or arm when that one's
pass rate reaches the floor (``gate.floor``, or ``gate.floors.<intent>``) and, where a cloud
run exists, is no more than ``gate.margin`` below the best cloud rate; of several local
candidates the best rate wins (an arm with thinking on can win an intent), the plain backend
on a tie. Otherwise the intent goes to the cloud. Without any evidence it keeps its line.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from router.config import INTENTS, Config
from router.gate.show import order_targets
from router.gate.stats import Tally, percent, span, tally
from router.gate.store import Evidence, fingerprint

_EPSILON = 1e-9  # 0.8 >= 0.9 - 0.1 must hold in floating point too


@dataclass(frozen=True)
class Line:
    intent: str
    current: str | dict[str, float] | None
    proposed: str | dict[str, float] | None
    reason: str  # local_meets_floor | below_floor | behind_cloud | no_local_evidence | no_evidence
    floor: float
    tallies: dict[str, Tally] = field(default_factory=dict)  # target → its tally for the intent
    routes: dict[str, str] = field(default_factory=dict)  # target → local | cloud

    @property
    def changed(self) -> bool:
        return self.proposed != self.current

    def evidence_text(self) -> str:
        parts = []
        for target, t in self.tallies.items():
            errors = f", {t.errors} err" if t.errors else ""
            parts.append(f"{target} {t.passed}/{t.cases} {percent(t.rate)} {span(t.interval)}{errors}")
        return "; ".join(parts) or "no evidence"


@dataclass(frozen=True)
class Proposal:
    lines: list[Line]
    stale: list[str]  # what changed since the evidence was gathered
    floor: float
    margin: float

    @property
    def intents(self) -> dict[str, Any]:
        return {line.intent: line.proposed for line in self.lines if line.proposed is not None}

    def diff(self, current: dict[str, Any]) -> str:
        before = [f"{k}: {_value(v)}\n" for k, v in current.items()]
        after = [f"{k}: {_value(v)}\n" for k, v in self.intents.items()]
        return "".join(
            difflib.unified_diff(before, after, "routing.intents (config)", "routing.intents (proposed)")
        )


def propose(config: Config, evidence: dict[str, Evidence]) -> Proposal:
    gate = config.gate
    lines = [_line(config, evidence, intent) for intent in INTENTS]
    return Proposal(lines, stale_evidence(config, evidence), gate.floor, gate.margin)


def _route(config: Config, evidence: dict[str, Evidence], target: str) -> str:
    backend = config.backends.get(target)
    return backend.route_name if backend is not None else evidence[target].route


def _line(config: Config, evidence: dict[str, Evidence], intent: str) -> Line:
    categories = [c for c, i in config.gate.categories.items() if i == intent]
    current = config.routing.intents.get(intent)
    floor = config.gate.floors.get(intent, config.gate.floor)
    tallies: dict[str, Tally] = {}
    for target in order_targets(config, evidence):  # local, its arms, then cloud
        found = evidence[target]
        results = [r for c in categories for r in found.results.get(c, [])]
        if results:
            tallies[target] = tally(results)
    routes = {t: _route(config, evidence, t) for t in tallies}

    def make(proposed: str | dict[str, float] | None, reason: str) -> Line:
        return Line(intent, current, proposed, reason, floor, tallies, routes)

    if not tallies:
        return make(current, "no_evidence")
    local = {t: v for t, v in tallies.items() if routes[t] == "local" and v.rate is not None}
    cloud = {t: v for t, v in tallies.items() if routes[t] == "cloud" and v.rate is not None}
    best_cloud = max(cloud, key=lambda t: cloud[t].rate or 0.0) if cloud else None
    cloud_rate = cloud[best_cloud].rate if best_cloud else None
    meets = [t for t, v in local.items() if (v.rate or 0.0) + _EPSILON >= floor]
    close = [
        t
        for t in meets
        if cloud_rate is None or (local[t].rate or 0.0) + _EPSILON >= cloud_rate - config.gate.margin
    ]
    if close:
        # The best rate; on a tie, the plain backend before an arm (thinking costs time).
        chosen = max(
            close,
            key=lambda t: (
                local[t].rate or 0.0,
                config.backends.get(t) is not None and config.backends[t].variant_of is None,
            ),
        )
        return make(_spelled(config, current, chosen), "local_meets_floor")
    reason = "behind_cloud" if meets else "below_floor" if local else "no_local_evidence"
    if best_cloud is not None:
        return make(_spelled(config, current, best_cloud), reason)
    cloud_alias = "cloud" if config.backend_for_route("cloud") else None
    keep_cloud = isinstance(current, str) and _route_of_value(config, current) == "cloud"
    return make(current if keep_cloud else cloud_alias or current, reason)


def _spelled(config: Config, current: Any, target: str) -> str:
    """``target`` as the table already spells it (``local`` rather than its backend's name)."""
    if isinstance(current, str) and config.backend_for_route(current) == target:
        return current
    return target


def _route_of_value(config: Config, value: str) -> str | None:
    name = config.backend_for_route(value)
    return config.backends[name].route_name if name else None


def stale_evidence(config: Config, evidence: dict[str, Evidence]) -> list[str]:
    """Each run whose backend or arm has changed (recipe, model, thinking) or is gone."""
    out: list[str] = []
    for target, found in evidence.items():
        for run in {r.id: r for r in found.runs.values()}.values():
            if target not in config.backends:
                out.append(f"{target}: no longer configured (run {run.id})")
            elif fingerprint(config, target) != run.recipe_hash:
                when = run.started_at.strftime("%Y-%m-%d %H:%M")
                out.append(
                    f"{target}: its recipe or model changed after run {run.id} ({when} UTC): run the gate again"
                )
    return out


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {v:g}" for k, v in value.items()) + "}"
    return str(value)


def render_yaml(config: Config, proposal: Proposal) -> str:
    width = max(len(line.intent) + len(_value(line.proposed)) for line in proposal.lines) + 2
    out = [
        f"# Proposed by offload gate: floor {proposal.floor:.0%}, cloud margin {proposal.margin * 100:g} points.",
        "# Never applied: copy what you agree with into the config.",
    ]
    out += [f"# STALE: {s}" for s in proposal.stale]
    out += ["routing:", "  intents:"]
    for line in proposal.lines:
        text = f"{line.intent}: {_value(line.proposed)}"
        out.append(f"    {text:<{width}}  # {line.reason}: {line.evidence_text()}")
    diff = proposal.diff(dict(config.routing.intents))
    out += ["", "# Against the current table:" if diff else "# Same as the current table."]
    out += [f"# {d}" for d in diff.splitlines()]
    return "\n".join(out) + "\n"


def as_json(config: Config, proposal: Proposal) -> dict[str, Any]:
    return {
        "intents": proposal.intents,
        "floor": proposal.floor,
        "margin": proposal.margin,
        "stale": proposal.stale,
        "diff": proposal.diff(dict(config.routing.intents)),
        "evidence": {
            line.intent: {
                "current": line.current,
                "proposed": line.proposed,
                "reason": line.reason,
                "floor": line.floor,
                "targets": {
                    t: {
                        "route": line.routes[t],
                        "passed": v.passed,
                        "failed": v.failed,
                        "errors": v.errors,
                        "cases": v.cases,
                        "rate": v.rate,
                        "interval": v.interval,
                    }
                    for t, v in line.tallies.items()
                },
            }
            for line in proposal.lines
        },
    }
