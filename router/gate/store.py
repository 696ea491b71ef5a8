"""Gate runs and their graded cases in SQL (``gate_runs``, ``gate_results``, migration 0007),
and the evidence read back: for each backend or arm, each category's newest results.

A run stores what answered: the backend (or arm), its route, its model and the hash of its
serving settings (:func:`fingerprint`). A config whose hash differs today has changed what
answers since: that run's evidence is stale.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
import sqlalchemy as sa

from router.config import Config
from router.ledger.db import ensure_schema, make_engine, sqlite_file_missing
from router.ledger.models import GateResult, GateRun, gate_results_table, gate_runs_table, usage_table

RUNS_PER_TARGET = 20  # how far back a category's newest results are looked for


@dataclass(frozen=True)
class Result:
    case_id: str
    category: str
    difficulty: str | None
    evaluator: str
    status: str  # "pass" | "fail" | "error"
    score: float
    detail: str
    elapsed_s: float = 0.0
    tokens: int = 0


@dataclass(frozen=True)
class Run:
    id: str
    started_at: datetime
    source: str  # "run" | "import"
    target: str  # the backend or arm that answered
    backend: str
    route: str
    model: str
    recipe_hash: str
    suites: tuple[str, ...] = ()
    label: str | None = None
    finished_at: datetime | None = None
    wall_time_s: float | None = None


@dataclass
class Evidence:
    """One backend's or arm's newest results per category, and the runs they came from."""

    target: str
    route: str
    results: dict[str, list[Result]] = field(default_factory=dict)
    runs: dict[str, Run] = field(default_factory=dict)  # category → its run

    def all_results(self) -> list[Result]:
        return [r for results in self.results.values() for r in results]


def fingerprint(config: Config, target: str) -> str:
    """The hash of what makes ``target`` answer as it does: kind, model, the extra body it
    sends (thinking on or off), its thinking policy and its vLLM recipe's serve line."""
    b = config.backends[target]
    what = {
        "kind": b.kind,
        "model": b.model,
        "extra_body": b.extra_body,
        "thinking": b.thinking,
        "recipe": b.recipe_sha256,
    }
    return hashlib.sha256(orjson.dumps(what, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def save(url: str, run: Run, results: list[Result]) -> None:
    """Store a run and its results in one transaction (SQLite is upgraded first, as by serve)."""
    ensure_schema(url)
    engine = make_engine(url, pooled=False)
    try:
        with engine.begin() as conn:
            values = dataclasses.asdict(run)
            values["suites"] = orjson.dumps(list(run.suites)).decode()
            conn.execute(sa.insert(GateRun), values)
            if results:
                rows = [{"run_id": run.id, **dataclasses.asdict(r)} for r in results]
                conn.execute(sa.insert(GateResult), rows)
    finally:
        engine.dispose()


def runs(url: str, limit: int = 50) -> list[Run]:
    """The newest runs, newest first."""
    return [
        _run(r)
        for r in _read(
            url, sa.select(gate_runs_table).order_by(gate_runs_table.c.started_at.desc()).limit(limit)
        )
    ]


def evidence(url: str) -> dict[str, Evidence]:
    """Per backend or arm, each category's results from the newest run that has it."""
    out: dict[str, Evidence] = {}
    by_target: dict[str, list[Run]] = {}
    for run in runs(url, limit=1000):
        if len(by_target.setdefault(run.target, [])) < RUNS_PER_TARGET:
            by_target[run.target].append(run)
    for target, newest_first in by_target.items():
        found = out.setdefault(target, Evidence(target, newest_first[0].route))
        for run in newest_first:
            for category, results in _results(url, run.id).items():
                if category not in found.results:
                    found.results[category] = results
                    found.runs[category] = run
    return out


def tokens(url: str, run_id: str) -> tuple[int, int, int]:
    """``(prompt, completion, cached)`` tokens of a run's requests, from their usage rows."""
    u = usage_table.c
    query = sa.select(
        sa.func.coalesce(sa.func.sum(u.prompt_tokens), 0).label("prompt"),
        sa.func.coalesce(sa.func.sum(u.completion_tokens), 0).label("completion"),
        sa.func.coalesce(sa.func.sum(u.cached_tokens), 0).label("cached"),
    ).where(u.gate_run == run_id)
    rows = _read(url, query)
    return (int(rows[0]["prompt"]), int(rows[0]["completion"]), int(rows[0]["cached"])) if rows else (0, 0, 0)


def _results(url: str, run_id: str) -> dict[str, list[Result]]:
    c = gate_results_table.c
    query = sa.select(gate_results_table).where(c.run_id == run_id).order_by(c.id)
    grouped: dict[str, list[Result]] = {}
    for row in _read(url, query):
        values = {k: row[k] for k in Result.__dataclass_fields__}
        grouped.setdefault(row["category"], []).append(Result(**values))
    return grouped


def _run(row: dict[str, Any]) -> Run:
    values = {k: row[k] for k in Run.__dataclass_fields__}
    values["suites"] = tuple(orjson.loads(row["suites"] or "[]"))
    return Run(**values)


def _read(url: str, query: Any) -> list[dict[str, Any]]:
    if sqlite_file_missing(url):
        return []
    engine = make_engine(url, pooled=False)
    try:
        with engine.connect() as conn:
            if not sa.inspect(conn).has_table(GateRun.__tablename__):
                return []
            return [dict(r._mapping) for r in conn.execute(query)]
    finally:
        engine.dispose()
