"""``offload gate show``: the evidence in the article's style.

Per category: pass, fail, error and the rate with its Wilson interval, each backend or arm
side by side (local, local with thinking, cloud); the difficulty curve; errors and
timeouts counted. The overall line is there, but never alone.
"""

from __future__ import annotations

from typing import Any

from router.config import Config
from router.gate.stats import Tally, by, difficulty_order, percent, span, tally
from router.gate.store import Evidence, fingerprint

_CELL = 32


def order_targets(config: Config, evidence: dict[str, Evidence]) -> list[str]:
    """Local first (the plain backend before its arms), then cloud; by name within."""

    def key(target: str) -> tuple[int, int, str]:
        backend = config.backends.get(target)
        arm = backend is not None and backend.variant_of is not None
        return (evidence[target].route != "local", arm, target)

    return sorted(evidence, key=key)


def categories(config: Config, evidence: dict[str, Evidence]) -> list[str]:
    seen = {c for e in evidence.values() for c in e.results}
    mapped = [c for c in config.gate.categories if c in seen]
    return mapped + sorted(seen - set(mapped))


def _cell(t: Tally | None) -> str:
    if t is None or not t.cases:
        return f"{'-':>5}"
    return f"{t.passed:>5}{t.failed:>5}{t.errors:>5}{percent(t.rate):>6}  {span(t.interval):<11}"


def _curve_cell(t: Tally | None) -> str:
    if t is None or not t.cases:
        return f"{'-':>7}"
    return f"{t.passed:>3}/{t.cases:<3}{percent(t.rate):>6}  {span(t.interval):<11}"


def render(config: Config, evidence: dict[str, Evidence]) -> str:
    if not evidence:
        return (
            "No gate runs yet: offload gate run --suite PATH --backend NAME, or offload gate import FILE.\n"
        )
    targets = order_targets(config, evidence)
    out = ["Gate evidence: each category's newest results, per backend or arm", ""]
    out += [_run_line(config, evidence[t]) for t in targets]
    out += ["", f"{'category':<15}" + "".join(f"{t[:_CELL]:<{_CELL}}" for t in targets)]
    out.append(
        f"{'':<15}"
        + f"{'pass':>5}{'fail':>5}{'err':>5}{'rate':>6}  {'95% CI':<11}".ljust(_CELL) * len(targets)
    )
    for category in categories(config, evidence):
        cells = [
            _cell(tally(evidence[t].results[category]) if category in evidence[t].results else None)
            for t in targets
        ]
        out.append(f"{category:<15}" + "".join(c.ljust(_CELL) for c in cells))
    totals = [tally(evidence[t].all_results()) for t in targets]
    out.append(f"{'all':<15}" + "".join(_cell(t).ljust(_CELL) for t in totals))
    curves = {t: by(evidence[t].all_results(), lambda r: r.difficulty) for t in targets}
    levels = difficulty_order({d for c in curves.values() for d in c})
    if levels:
        out += ["", f"{'difficulty':<15}" + "".join(f"{t[:_CELL]:<{_CELL}}" for t in targets)]
        for level in levels:
            out.append(
                f"{level:<15}" + "".join(_curve_cell(curves[t].get(level)).ljust(_CELL) for t in targets)
            )
    out.append("")
    out += [
        f"{t}: {v.errors} errors ({v.timeouts} timeouts) of {v.cases} cases"
        for t, v in zip(targets, totals, strict=True)
    ]
    out.append("rate: passes of all cases asked (an error is not a pass); 95% CI: Wilson interval.")
    return "\n".join(line.rstrip() for line in out) + "\n"


def _run_line(config: Config, found: Evidence) -> str:
    runs = {r.id: r for r in found.runs.values()}.values()
    parts = []
    for run in runs:
        fresh = found.target in config.backends and fingerprint(config, found.target) == run.recipe_hash
        state = "recipe as configured" if fresh else "STALE: recipe or model changed since"
        how = "imported " + (run.label or "") if run.source == "import" else "run"
        parts.append(f"run {run.id} {run.started_at:%Y-%m-%d %H:%M} UTC, {how}, model {run.model}, {state}")
    return f"  {found.target} ({found.route}): " + "; ".join(parts)


def table(config: Config, evidence: dict[str, Evidence]) -> dict[str, Any]:
    """The same figures as :func:`render`, as plain data for the console's Gate page."""
    targets = order_targets(config, evidence)

    def row(name: str, pick: Any) -> dict[str, Any]:
        return {"name": name, "cells": [pick(evidence[t]) for t in targets]}

    def of(category: str) -> Any:
        return lambda e: tally(e.results[category]) if category in e.results else None

    curves = {t: by(evidence[t].all_results(), lambda r: r.difficulty) for t in targets}
    levels = difficulty_order({d for c in curves.values() for d in c})
    return {
        "targets": [
            {"name": t, "route": evidence[t].route, "runs": _run_line(config, evidence[t])} for t in targets
        ],
        "categories": [row(c, of(c)) for c in categories(config, evidence)],
        "all": row("all", lambda e: tally(e.all_results())),
        "difficulty": [{"name": d, "cells": [curves[t].get(d) for t in targets]} for d in levels],
    }


def as_json(config: Config, evidence: dict[str, Evidence]) -> dict[str, Any]:
    def tally_json(t: Tally) -> dict[str, Any]:
        return {"passed": t.passed, "failed": t.failed, "errors": t.errors, "timeouts": t.timeouts,
                "cases": t.cases, "rate": t.rate, "interval": t.interval}  # fmt: skip

    out: dict[str, Any] = {}
    for target in order_targets(config, evidence):
        found = evidence[target]
        out[target] = {
            "route": found.route,
            "runs": sorted({r.id for r in found.runs.values()}),
            "by_category": {c: tally_json(tally(rs)) for c, rs in found.results.items()},
            "by_difficulty": {
                d: tally_json(t) for d, t in by(found.all_results(), lambda r: r.difficulty).items()
            },
            "all": tally_json(tally(found.all_results())),
        }
    return out
