"""``offload export``: the team's own stored traffic, in the ``offload train`` input format.

The loop that teaches the router a team's traffic (docs: README, "Learning from your
own traffic"): run with ``database.store_text`` on (optionally in shadow mode), export
the requests worth a look, correct their ``intent`` by hand, train with those labels
merged into the packaged corpus, compare before and after with ``offload eval
--compare``, and switch ``routing.classifier_weights`` to the new file.

Each exported line is ``{"id", "source": "team", "intent", "request", ...}`` where
``intent`` is the router's own guess (the line to correct), ``request`` is the stored
body as the classifier reads it (Responses and Messages bodies in the chat-shaped view
the policy uses), and the rest says why it was selected: ``router_intent``,
``confidence``, ``reason``, ``route``, ``shadow_route``, ``api``, ``started_at``.

Selections (``--select``):

* ``low-confidence``: decisions below ``--below`` (default: the config's floor);
* ``disagreements``: shadow mode rows where the policy's choice (``shadow_route``)
  differs from the route that served;
* ``sample``: ``--sample N`` rows at random (seeded), for an unbiased look;
* ``labelled``: the decisions people labelled in the console (``/offload/console``),
  with the person's intent as ``intent`` (ready for ``offload train --labels``) and
  ``labelled_by``, ``labelled_at``;
* ``pairs``: shadow runs beside the requests they copied (``routing.shadow_runs``), with
  ``cloud_answer``, ``local_answer``, ``arm`` and ``agreement``, for human or LLM grading;
* ``all``.

Only rows with stored text can be exported; without ``database.store_text`` the
command says so. It reads the database directly, never through the proxy.
"""

from __future__ import annotations

import argparse
import random
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import sqlalchemy as sa

from router.config import Config, load_config
from router.dialects import BY_PATH, CHAT, Dialect
from router.ledger.db import make_engine
from router.ledger.models import labels_table, usage_table
from router.ledger.report import month_argument

SELECTIONS = ("low-confidence", "disagreements", "sample", "labelled", "pairs", "all")
_DIALECTS: dict[str, Dialect] = {d.endpoint: d for d in BY_PATH.values()}


def select_rows(
    config: Config,
    start: datetime,
    end: datetime,
    selection: str,
    *,
    below: float | None = None,
    sample: int = 200,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """The usage rows with stored text in ``[start, end)`` that ``selection`` picks."""
    u = usage_table.c
    query = (
        sa.select(
            u.request_id,
            u.started_at,
            u.endpoint,
            u.api,
            u.intent,
            u.confidence,
            u.reason,
            u.route,
            u.shadow_route,
            u.prompt_text,
        )  # fmt: skip
        # Not a shadow run's copy, nor a gate run's benchmark prompt (test cases must not become training data).
        .where(u.started_at >= start, u.started_at < end, u.prompt_text.is_not(None))
        .where(u.shadow_of.is_(None), u.gate_run.is_(None))
        .order_by(u.started_at)
    )
    if selection == "low-confidence":
        floor = below if below is not None else config.routing.confidence_floor
        query = query.where(u.confidence.is_not(None), u.confidence < floor)
    elif selection == "disagreements":
        query = query.where(u.shadow_route.is_not(None), u.shadow_route != u.route)
    elif selection == "pairs":
        # Shadow runs (router/shadow/runs.py) beside the real requests they copied, for grading.
        shadow = usage_table.alias("shadow")
        query = query.join(shadow, shadow.c.shadow_of == u.request_id).add_columns(
            u.completion_text.label("cloud_answer"),
            shadow.c.completion_text.label("local_answer"),
            shadow.c.arm,
            shadow.c.agreement,
        )
    elif selection == "labelled":
        lb = labels_table.c
        query = query.join(labels_table, lb.request_id == u.request_id).add_columns(
            lb.intent.label("labelled_intent"), lb.labelled_by, lb.labelled_at
        )
    engine = make_engine(config.database.url, pooled=False)
    try:
        with engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(query)]
    finally:
        engine.dispose()
    if selection == "sample" and len(rows) > sample:
        rows = sorted(random.Random(seed).sample(rows, sample), key=lambda r: r["started_at"])
    return rows


def as_training_line(row: dict[str, Any]) -> dict[str, Any] | None:
    """One row as an ``offload train`` line, or None when its stored body is not a JSON object."""
    try:
        body = orjson.loads(row["prompt_text"])
    except orjson.JSONDecodeError:
        return None
    if not isinstance(body, dict):
        return None
    dialect = _DIALECTS.get(row["endpoint"], CHAT)
    guess = row["intent"] or "instruction"  # no guess (an override, a rule): a person decides
    labelled: dict[str, Any] = {}
    if "local_answer" in row:  # --select pairs: the two answers to grade
        labelled = {k: row[k] for k in ("arm", "agreement", "cloud_answer", "local_answer")}
    if row.get("labelled_intent"):  # --select labelled: a person already decided
        guess = row["labelled_intent"]
        labelled = {"labelled_by": row["labelled_by"], "labelled_at": _iso(row["labelled_at"])}
    return {
        "id": row["request_id"],
        "source": "team",
        "intent": guess,
        "request": dialect.view(body),
        "router_intent": row["intent"],
        "confidence": row["confidence"],
        "reason": row["reason"],
        "route": row["route"],
        "shadow_route": row["shadow_route"],
        "api": row["api"] or "chat",
        "started_at": _iso(row["started_at"]),
        **labelled,
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="offload export",
        description="Stored requests (database.store_text) in the offload train input format.",
    )
    parser.add_argument("--config", help="config file (default: OFFLOAD_CONFIG or config/router.yaml)")
    parser.add_argument("--month", required=True, help="YYYY-MM (UTC)")
    parser.add_argument("--select", choices=SELECTIONS, default="low-confidence")
    parser.add_argument(
        "--labels", action="store_const", const="labelled", dest="select", help="= --select labelled"
    )
    parser.add_argument(
        "--pairs", action="store_const", const="pairs", dest="select", help="= --select pairs"
    )
    parser.add_argument("--below", type=float, help="low-confidence: below this (default: confidence_floor)")
    parser.add_argument("--sample", type=int, default=200, help="sample: how many rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="the JSONL file to write")
    args = parser.parse_args(argv)
    config = load_config(args.config)
    start, end = month_argument(parser, args.month)
    if not config.database.enabled:
        print("offload export: database.enabled is false: nothing was recorded", file=sys.stderr)
        return 2
    rows = select_rows(config, start, end, args.select, below=args.below, sample=args.sample, seed=args.seed)
    lines = [line for line in map(as_training_line, rows) if line is not None]
    Path(args.out).write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    print(f"wrote {len(lines)} requests ({args.select}, {args.month}) to {args.out}")
    if not lines and not config.database.store_text:
        print(
            "offload export: database.store_text is off, so no request text was stored: turn it on to export",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
