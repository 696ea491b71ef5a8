"""``offload compare --month YYYY-MM [--intent math]``: what the shadow runs found.

Each shadow run (``router/shadow/runs.py``) is a usage row with ``shadow_of`` naming the real,
cloud-served request it copied. Per intent and local arm this reports: how many pairs ran;
the local arm's tokens, latency and errors beside the cloud's for the same requests; how
often the two answers agreed where a machine could judge (``router/shadow/agreement.py``); and
the money that would have moved had the intent been routed to the box: the month's cloud
spend on that intent, with the agreement rate as the evidence for or against doing so.
"""

from __future__ import annotations

import argparse
import statistics
from datetime import datetime
from typing import Any

import orjson
import sqlalchemy as sa

from router.config import Config, load_config
from router.ledger.db import make_engine, sqlite_file_missing
from router.ledger.models import usage_table
from router.ledger.prices import cost, rates
from router.ledger.report import month_argument


def pairs(config: Config, start: datetime, end: datetime, intent: str | None = None) -> list[dict[str, Any]]:
    """(real, shadow) row pairs in ``[start, end)``, one dict each."""
    real_rows, shadow_rows = usage_table.alias("real"), usage_table.alias("shadow")
    real, shadow = real_rows.c, shadow_rows.c
    columns = [
        real.intent, shadow.arm, real.backend.label("cloud_backend"),
        real.prompt_tokens.label("cloud_prompt"), real.completion_tokens.label("cloud_completion"),
        real.cached_tokens.label("cloud_cached"), real.cache_write_tokens.label("cloud_cache_write"),
        real.latency_ms.label("cloud_latency"),
        real.status.label("cloud_status"), shadow.prompt_tokens.label("local_prompt"),
        shadow.completion_tokens.label("local_completion"), shadow.latency_ms.label("local_latency"),
        shadow.status.label("local_status"), shadow.error_type.label("local_error"), shadow.agreement,
    ]  # fmt: skip
    query = (
        sa.select(*columns)
        .select_from(shadow_rows.join(real_rows, real.request_id == shadow.shadow_of))
        .where(shadow.shadow_of.is_not(None), shadow.started_at >= start, shadow.started_at < end)
    )
    if intent is not None:
        query = query.where(real.intent == intent)
    return _read(config, query)


def cloud_spend(config: Config, start: datetime, end: datetime) -> dict[str, float]:
    """The month's cloud spend per intent (real traffic only): what routing it locally would move."""
    u = usage_table.c
    query = (
        sa.select(
            u.intent,
            u.backend,
            sa.func.sum(u.prompt_tokens).label("prompt"),
            sa.func.sum(u.completion_tokens).label("completion"),
            sa.func.sum(u.cached_tokens).label("cached"),
            sa.func.sum(u.cache_write_tokens).label("cache_write"),
        )  # fmt: skip
        .where(u.started_at >= start, u.started_at < end, u.route == "cloud", u.shadow_of.is_(None))
        .group_by(u.intent, u.backend)
    )
    spend: dict[str, float] = {}
    for row in _read(config, query):
        backend = config.backends.get(row["backend"] or "")
        if backend is not None:
            counts = (int(row[k] or 0) for k in ("prompt", "completion", "cached", "cache_write"))
            amount = cost(rates(backend), *counts)
            spend[row["intent"] or "unknown"] = spend.get(row["intent"] or "unknown", 0.0) + amount
    return spend


def summarise(config: Config, rows: list[dict[str, Any]], spend: dict[str, float]) -> list[dict[str, Any]]:
    """One line per (intent, arm)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["intent"] or "unknown", row["arm"] or "?"), []).append(row)
    out = []
    for (intent, arm), group in sorted(groups.items()):
        ran = [r for r in group if r["local_error"] != "shadow_yielded"]
        judged = [r for r in ran if r["agreement"] in ("agree", "disagree")]
        agreed = sum(r["agreement"] == "agree" for r in judged)
        out.append(
            {
                "intent": intent,
                "arm": arm,
                "pairs": len(ran),
                "yielded": len(group) - len(ran),
                "local": _side(ran, "local"),
                "cloud": _side(ran, "cloud"),
                "agreement": {
                    "agree": agreed,
                    "disagree": len(judged) - agreed,
                    "not_judged": len(ran) - len(judged),
                    "rate": round(agreed / len(judged), 4) if judged else None,
                },
                "cloud_spend_on_intent": round(spend.get(intent, 0.0), 6),
                "cloud_spend_on_pairs": round(sum(_pair_cost(config, r) for r in ran), 6),
            }
        )
    return out


def _side(rows: list[dict[str, Any]], side: str) -> dict[str, Any]:
    latencies = [r[f"{side}_latency"] for r in rows if r[f"{side}_latency"] is not None]
    return {
        "prompt_tokens": sum(int(r[f"{side}_prompt"] or 0) for r in rows),
        "completion_tokens": sum(int(r[f"{side}_completion"] or 0) for r in rows),
        "latency_ms_p50": round(statistics.median(latencies), 1) if latencies else None,
        "errors": sum((r[f"{side}_status"] or 0) >= 400 for r in rows),
    }


def _pair_cost(config: Config, row: dict[str, Any]) -> float:
    backend = config.backends.get(row["cloud_backend"] or "")
    if backend is None:
        return 0.0
    counts = (int(row[f"cloud_{k}"] or 0) for k in ("prompt", "completion", "cached", "cache_write"))
    return cost(rates(backend), *counts)


def _read(config: Config, query: Any) -> list[dict[str, Any]]:
    engine = make_engine(config.database.url, pooled=False)
    try:
        with engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]
    finally:
        engine.dispose()


def render(month: str, lines: list[dict[str, Any]]) -> str:
    if not lines:
        return f"No shadow runs in {month} (UTC): set routing.shadow_runs to gather some.\n"
    head = f"{'intent':<11}{'arm':<16}{'pairs':>6}{'agree':>7}{'disagree':>9}{'unjudged':>9}{'rate':>7}"
    head += f"{'local p50':>11}{'cloud p50':>11}{'local err':>10}{'cloud err':>10}{'would move':>12}"
    out = [f"Shadow runs {month} (UTC)", "", head, "-" * len(head)]
    for line in lines:
        a, local, cloud = line["agreement"], line["local"], line["cloud"]
        rate = f"{a['rate']:.0%}" if a["rate"] is not None else "-"
        out.append(
            f"{line['intent']:<11}{line['arm']:<16}{line['pairs']:>6}{a['agree']:>7}{a['disagree']:>9}"
            f"{a['not_judged']:>9}{rate:>7}{_ms(local['latency_ms_p50']):>11}{_ms(cloud['latency_ms_p50']):>11}"
            f"{local['errors']:>10}{cloud['errors']:>10}{line['cloud_spend_on_intent']:>12,.2f}"
        )
    out += [
        "",
        "rate: agreement where a machine could judge (maths final answers, tool calls, JSON);",
        "would move: the month's cloud spend on the intent, had it been routed to the box.",
        "Tokens per side: --format json. The pairs themselves: offload export --select pairs.",
    ]
    return "\n".join(out) + "\n"


def _ms(value: float | None) -> str:
    return f"{value:,.0f} ms" if value is not None else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="offload compare", description="What the shadow runs found.")
    parser.add_argument("--config", help="config file (default: OFFLOAD_CONFIG or config/router.yaml)")
    parser.add_argument("--month", required=True, help="YYYY-MM (UTC)")
    parser.add_argument("--intent", help="only this intent")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    args = parser.parse_args(argv)
    config = load_config(args.config)
    start, end = month_argument(parser, args.month)
    if sqlite_file_missing(config.database.url):
        lines: list[dict[str, Any]] = []
    else:
        lines = summarise(config, pairs(config, start, end, args.intent), cloud_spend(config, start, end))
    if args.format == "json":
        print(
            orjson.dumps(
                {"month": args.month, "by_intent_and_arm": lines}, option=orjson.OPT_INDENT_2
            ).decode()
        )
    else:
        print(render(args.month, lines), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
