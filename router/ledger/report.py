"""The monthly offload report: ``offload report --month YYYY-MM``.

Months are calendar months in UTC. Money is in whatever currency the config's
prices are in. Token counts follow OpenAI's usage semantics: ``cached_tokens``
(read from the prompt cache) and ``cache_write_tokens`` (written to it: Anthropic)
are parts of ``prompt_tokens``, reasoning tokens part of ``completion_tokens``;
``uncounted_prompt_tokens`` are the prompt tokens of rows with no cached count.
The prices, and the ones derived where the config sets none, are
``router.ledger.prices``; the report lists the ones it used.

Rows are grouped by the route that served them (``unrouted`` when none did).
Per-route counts include failed requests (``errors``); the local share of
requests counts answered ones only. Local tokens are valued as the local
backend's first cloud fallback (else the first cloud backend) would have billed
them: cached tokens as cache reads, the rest as input (for Anthropic, as cache
writes), tokens with no cached count at the full input price (and the report
says how many).

The figures are read from ``usage_daily`` (``router.ledger.models.UsageDaily``), the
per-day sums that database triggers keep as rows are written: the same numbers
as aggregating the month's ``usage`` rows, without reading them.
"""

from __future__ import annotations

import argparse
import calendar
import csv
import io
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Any

import orjson
from sqlalchemy import Select, func, inspect, select

from router.config import Config, ConfigError, load_config
from router.ledger.db import SchemaOutOfDate, make_engine, sqlite_file_missing
from router.ledger.models import UsageDaily, usage_daily_table, usage_table
from router.ledger.prices import as_cloud_would_bill, as_dict, cost, rates

_MONTH = re.compile(r"(\d{4})-(0[1-9]|1[0-2])")
# The token sums of each rollup group (router.ledger.models.UsageDaily), as the report adds them.
_TOKENS = (
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "uncounted_prompt_tokens",
)
UNROUTED = "unrouted"  # rows whose request was never served (route NULL)


def month_bounds(month: str) -> tuple[datetime, datetime]:
    """``[start, end)`` of a ``YYYY-MM`` month in UTC; ValueError otherwise."""
    m = _MONTH.fullmatch(month or "")
    if not m:
        raise ValueError(f"--month must look like YYYY-MM (e.g. 2026-11), got {month!r}")
    year, mon = int(m.group(1)), int(m.group(2))
    start = datetime(year, mon, 1, tzinfo=UTC)
    end = datetime(year + (mon == 12), mon % 12 + 1, 1, tzinfo=UTC)
    return start, end


def month_argument(parser: argparse.ArgumentParser, month: str) -> tuple[datetime, datetime]:
    """:func:`month_bounds` of a command's ``--month``; a bad one is the parser's usage error."""
    try:
        return month_bounds(month)
    except ValueError as exc:
        parser.error(str(exc))


def elapsed_hours(start: datetime, end: datetime, now: datetime) -> float:
    """Hours of ``[start, end)`` that have passed at ``now``: all of a past month, none of a
    future one, the hours so far of the month in progress (hardware and power accrue by them)."""
    return max(0.0, (min(now, end) - start).total_seconds() / 3600)


def current_month(now: datetime | None = None) -> str:
    """``YYYY-MM`` of ``now`` (default: the present) in UTC: ``--month``'s default."""
    return (now or datetime.now(UTC)).strftime("%Y-%m")


def reference_cloud(config: Config, local_backend: str, api: str = "chat") -> str | None:
    """The cloud backend whose prices value a local backend's tokens of one API.

    Where that traffic would have gone (the first cloud fallback that serves the
    API, as the proxy resolves them: Messages traffic is priced as the Anthropic
    backend's), else the first cloud backend serving the API, else the first cloud
    backend in the config (also for a backend since removed from the config).
    """
    chain = config.fallback_chain(local_backend)[1:] if local_backend in config.backends else []
    clouds = [n for n, b in config.backends.items() if b.route_name == "cloud"]
    serving = [n for n in clouds if api in config.backends[n].served_apis]
    for name in chain:
        if name in serving:
            return name
    for name in chain:
        same_route = [n for n in serving if config.backends[n].route_name == config.backends[name].route_name]
        if config.backends[name].route_name == "cloud" and same_route:
            return same_route[0]
    return next(iter(serving or clouds), None)


def _counts() -> dict[str, int]:
    return {"requests": 0, "errors": 0, **dict.fromkeys(_TOKENS, 0), "total_tokens": 0}


def _add(into: dict[str, int], row: dict[str, Any]) -> None:
    for key in ("requests", "errors", *_TOKENS):
        into[key] += int(row[key] or 0)
    into["total_tokens"] = into["prompt_tokens"] + into["completion_tokens"]


def _query(config: Config, start: datetime, end: datetime) -> list[dict[str, Any]]:
    """The month's sums by the dimensions the report needs: one read of the per-day
    rollup (``router.ledger.models.UsageDaily``), a few hundred rows, not a month of requests."""
    if sqlite_file_missing(config.database.url):
        return []  # do not create an empty database file just to report on it
    engine = make_engine(config.database.url, pooled=False)
    try:
        with engine.connect() as conn:
            tables = inspect(conn)
            if not tables.has_table(usage_table.name):
                return []  # nothing was ever recorded here
            daily = UsageDaily.__tablename__
            if not tables.has_table(daily) or "uncounted_prompt_tokens" not in {
                c["name"] for c in tables.get_columns(daily)
            }:
                raise SchemaOutOfDate(
                    "the database schema predates the rollup's cache counts (revision 0009); "
                    "run: offload db upgrade --config PATH"
                )
            return [dict(r._mapping) for r in conn.execute(month_sums(start, end))]
    finally:
        engine.dispose()


def month_sums(start: datetime, end: datetime) -> Select[Any]:
    """Counts and token sums of the real traffic of ``[start, end)`` (UTC midnights), by
    route, backend, intent, api, fallback and fallback reason; NULL where the rows had none.

    Shadow runs (router/shadow/runs.py) are evidence, not traffic: the rollup leaves them out
    and `offload compare` reads them. Groups whose rows were all deleted again sum to zero
    requests and are left out, so that an emptied month reads as empty.
    """
    d = usage_daily_table.c
    keys = [d.route, d.backend, d.intent, d.api, d.fallback, d.fallback_reason]
    requests = func.sum(d.requests)
    return (
        select(
            *(k if k is d.fallback else func.nullif(k, "").label(k.name) for k in keys),
            requests.label("requests"),
            func.sum(d.errors).label("errors"),
            *(func.sum(d[name]).label(name) for name in _TOKENS),
        )
        .where(d.day >= utc_day(start), d.day < utc_day(end))
        .group_by(*keys)
        .having(requests > 0)
    )


def utc_day(at: datetime) -> date:
    """The UTC day that starts at ``at``; ValueError for any other time (the rollup has
    whole days only)."""
    at = at.astimezone(UTC)
    if at.time() != time(0):
        raise ValueError(f"the usage rollup holds whole UTC days: {at.isoformat()} is not a midnight")
    return at.date()


def _merge(into: dict[str, Any], counts: dict[str, int], **money: float) -> None:
    """Add one API's counts and money into a backend's entry."""
    for key, n in counts.items():
        into[key] += n
    for key, amount in money.items():
        into[key] = _r(into[key] + amount)


def _r(x: float) -> float:
    return round(x, 6)


def build_report(config: Config, month: str, now: datetime | None = None) -> dict[str, Any]:
    start, end = month_bounds(month)
    rows = _query(config, start, end)
    now = now or datetime.now(UTC)
    month_hours = calendar.monthrange(start.year, start.month)[1] * 24
    hours = elapsed_hours(start, end, now)
    tally = _tally(rows)
    by_route = tally.by_route
    local, cloud = by_route.get("local", _counts()), by_route.get("cloud", _counts())
    # Shares count answered requests only: a failed request moved no work anywhere.
    local_ok = local["requests"] - local["errors"]
    routed_req = local_ok + cloud["requests"] - cloud["errors"]
    routed_tok = local["total_tokens"] + cloud["total_tokens"]
    priced = _priced(config, tally.served)
    spend, value = priced.spend, priced.value
    hardware = _hardware(config, hours, month_hours)
    spend_total = sum(v["cost"] for v in spend.values())
    value_total = sum(v["value"] for v in value.values())
    local_cost = sum(v["total"] for v in hardware.values())
    total, fallbacks = tally.total, tally.fallbacks
    return {
        "month": month,
        "start": start.isoformat(),
        "end": end.isoformat(),
        "partial": now < end,
        "currency": config.report.currency,
        "empty": not rows,
        "requests": total["requests"],
        "errors": total["errors"],
        "tokens": {k: total[k] for k in (*_TOKENS, "total_tokens")},
        "by_route": dict(sorted(by_route.items())),
        "by_intent": dict(sorted(tally.by_intent.items())),
        "by_api": dict(sorted(tally.by_api.items())),
        "local_share": {
            "requests": _r(local_ok / routed_req) if routed_req else 0.0,
            "tokens": _r(local["total_tokens"] / routed_tok) if routed_tok else 0.0,
        },
        "fallbacks": {"count": sum(fallbacks.values()), "by_reason": dict(sorted(fallbacks.items()))},
        "cloud_spend": {"total": _r(spend_total), "by_backend": spend, "unpriced_backends": priced.unpriced},
        "local_value": {
            "cloud_equivalent": _r(value_total),
            # The same tokens with every prompt token at the input price: what the cache is worth.
            "without_cache_discount": _r(sum(v["without_cache_discount"] for v in value.values())),
            "uncounted_prompt_tokens": sum(v["uncounted_prompt_tokens"] for v in value.values()),
            "by_backend": value,
        },
        "prices": priced.prices,
        "local_cost": {
            "hours": _r(hours),
            "month_hours": month_hours,
            "amortisation": _r(sum(v["amortisation"] for v in hardware.values())),
            "power": _r(sum(v["power"] for v in hardware.values())),
            "total": _r(local_cost),
            "by_backend": hardware,
        },
        "net_offload": _r(value_total - local_cost),
    }


@dataclass
class _Tally:
    """The month's per-day sums added up, by route, intent, API and serving backend."""

    total: dict[str, int] = field(default_factory=lambda: _counts())
    by_route: dict[str, dict[str, int]] = field(default_factory=dict)
    by_intent: dict[str, dict[str, int]] = field(default_factory=dict)
    by_api: dict[str, dict[str, int]] = field(default_factory=dict)
    served: dict[tuple[str, str, str], dict[str, int]] = field(default_factory=dict)  # (route, backend, api)
    fallbacks: dict[str, int] = field(default_factory=dict)


def _tally(rows: list[dict[str, Any]]) -> _Tally:
    t = _Tally()
    for row in rows:
        route = row["route"] or UNROUTED
        _add(t.total, row)
        _add(t.by_route.setdefault(route, _counts()), row)
        _add(t.by_intent.setdefault(row["intent"] or "unknown", _counts()), row)
        api = row["api"] or "chat"  # rows from before the api column were chat-family traffic
        _add(t.by_api.setdefault(api, _counts()), row)
        if row["route"]:
            # A served row without a backend name cannot be priced: it shows up as unpriced.
            _add(t.served.setdefault((route, row["backend"] or "(unknown)", api), _counts()), row)
        if row["fallback"]:
            reason = row["fallback_reason"] or "unspecified"
            t.fallbacks[reason] = t.fallbacks.get(reason, 0) + int(row["requests"])
    return t


@dataclass
class _Priced:
    """What the cloud backends cost (``spend``), what the local tokens were worth at cloud
    prices (``value``), the cloud backends no longer in the config (``unpriced``) and the
    prices used for either (``prices``, by backend)."""

    spend: dict[str, Any] = field(default_factory=dict)
    value: dict[str, Any] = field(default_factory=dict)
    unpriced: list[str] = field(default_factory=list)
    prices: dict[str, Any] = field(default_factory=dict)


def _priced(config: Config, served: dict[tuple[str, str, str], dict[str, int]]) -> _Priced:
    out = _Priced()
    for (route, backend, api), c in sorted(served.items()):
        if route == "cloud":
            if backend not in config.backends:
                if backend not in out.unpriced:
                    out.unpriced.append(backend)  # served by a backend since removed from the config
                continue
            r = rates(config.backends[backend])
            out.prices[backend] = as_dict(r)
            amount = cost(
                r, c["prompt_tokens"], c["completion_tokens"], c["cached_tokens"], c["cache_write_tokens"]
            )
            _merge(out.spend.setdefault(backend, {**_counts(), "cost": 0.0}), c, cost=amount)
        elif route == "local":
            ref = reference_cloud(config, backend, api)
            worth = full = 0.0
            if ref:
                r = rates(config.backends[ref])
                out.prices[ref] = as_dict(r)
                tokens = (c["prompt_tokens"], c["completion_tokens"], c["cached_tokens"])
                worth = as_cloud_would_bill(r, *tokens, c["uncounted_prompt_tokens"])
                full = cost(r, c["prompt_tokens"], c["completion_tokens"], 0)
            entry = out.value.setdefault(backend, _value_entry(config, backend))
            _merge(entry, c, value=worth, without_cache_discount=full)
            entry["priced_as_by_api"][api] = ref
    out.prices = dict(sorted(out.prices.items()))
    return out


def _value_entry(config: Config, backend: str) -> dict[str, Any]:
    return {
        **_counts(),
        "priced_as": reference_cloud(config, backend),
        "priced_as_by_api": {},
        "value": 0.0,
        "without_cache_discount": 0.0,
    }


def _hardware(config: Config, hours: float, month_hours: int) -> dict[str, Any]:
    """Each local box's month so far (``hours`` of ``month_hours``): its amortisation and
    its power."""
    hardware: dict[str, Any] = {}
    for name, box in config.backends.items():
        hw = box.hardware
        if box.route_name != "local" or hw is None:
            continue
        # The month in progress pays for the hours it has had, not for the whole month.
        amort = hw.cost / hw.amortisation_months * hours / month_hours
        power = hw.watts * hours * hw.price_per_kwh / 1000
        hardware[name] = {"amortisation": _r(amort), "power": _r(power), "total": _r(amort + power)}
    return hardware


# ---------------------------------------------------------------- rendering


def _csv_rows(report: dict[str, Any]) -> Iterable[tuple[str, str, str, Any]]:
    """Long format (section, key, metric, value): one number per line, easy to pivot."""
    yield ("summary", "", "month", report["month"])
    yield ("summary", "", "currency", report["currency"])
    yield ("summary", "", "partial", str(report["partial"]).lower())
    yield ("summary", "", "empty", str(report["empty"]).lower())
    yield ("summary", "", "requests", report["requests"])
    yield ("summary", "", "errors", report["errors"])
    for k, v in report["tokens"].items():
        yield ("summary", "", k, v)
    yield ("summary", "", "local_share_requests", report["local_share"]["requests"])
    yield ("summary", "", "local_share_tokens", report["local_share"]["tokens"])
    for section in ("by_route", "by_intent", "by_api"):
        for key, counts in report[section].items():
            for metric, v in counts.items():
                yield (section.removeprefix("by_"), key, metric, v)
    yield ("fallbacks", "", "count", report["fallbacks"]["count"])
    for reason, n in report["fallbacks"]["by_reason"].items():
        yield ("fallbacks", reason, "count", n)
    for backend, v in report["cloud_spend"]["by_backend"].items():
        yield ("cloud_spend", backend, "cost", v["cost"])
    yield ("cloud_spend", "", "total", report["cloud_spend"]["total"])
    for backend, v in report["local_value"]["by_backend"].items():
        yield ("local_value", backend, "cloud_equivalent", v["value"])
    yield ("local_value", "", "cloud_equivalent", report["local_value"]["cloud_equivalent"])
    yield ("local_value", "", "without_cache_discount", report["local_value"]["without_cache_discount"])
    yield ("local_value", "", "uncounted_prompt_tokens", report["local_value"]["uncounted_prompt_tokens"])
    for backend, p in report["prices"].items():
        for metric, v in p.items():
            yield ("prices", backend, metric, "; ".join(v) if isinstance(v, list) else v)
    for metric in ("amortisation", "power", "total"):
        yield ("local_cost", "", metric, report["local_cost"][metric])
    yield ("summary", "", "net_offload", report["net_offload"])


def _table(report: dict[str, Any]) -> str:
    month = report["month"]
    if report["empty"]:
        return f"No usage recorded in {month} (UTC): nothing to report.\n"
    lines = [f"Offload report {month} (UTC){'  [month in progress]' if report['partial'] else ''}", ""]
    head = f"{'':<14}{'requests':>10}{'errors':>8}{'prompt':>14}{'completion':>14}{'cached':>12}{'total':>14}"

    def block(title: str, groups: dict[str, dict[str, int]]) -> None:
        lines.extend([f"{title:<14}" + head[14:], "-" * len(head)])
        for key, c in groups.items():
            lines.append(
                f"{key:<14}{c['requests']:>10,}{c['errors']:>8,}{c['prompt_tokens']:>14,}"
                f"{c['completion_tokens']:>14,}{c['cached_tokens']:>12,}{c['total_tokens']:>14,}"
            )
        lines.append("")

    block("route", report["by_route"])
    block("intent", report["by_intent"])
    block("api", report["by_api"])
    share = report["local_share"]
    lines.append(f"local share: {share['requests']:.1%} of requests, {share['tokens']:.1%} of tokens")
    fb = report["fallbacks"]
    reasons = ", ".join(f"{r} {n}" for r, n in fb["by_reason"].items())
    lines.append(f"fallbacks: {fb['count']}" + (f" ({reasons})" if reasons else ""))
    lines.append("")
    cur = report["currency"]
    lines.append(f"cloud spend (actual):             {report['cloud_spend']['total']:>12,.2f} {cur}")
    if report["cloud_spend"]["unpriced_backends"]:
        lines.append(f"  not priced (not in config): {', '.join(report['cloud_spend']['unpriced_backends'])}")
    refs = sorted(
        {str(r) for v in report["local_value"]["by_backend"].values() for r in v["priced_as_by_api"].values()}
    )
    lines.append(
        f"local tokens at cloud prices:     {report['local_value']['cloud_equivalent']:>12,.2f} {cur}"
        + (f"  (priced as {', '.join(refs)})" if refs else "")
    )
    lines.extend(_value_notes(report))
    lc = report["local_cost"]
    lines.append(
        f"local cost (hardware + power):    {lc['total']:>12,.2f} {cur}"
        f"  ({lc['amortisation']:,.2f} amortisation + {lc['power']:,.2f} power over "
        + (
            f"{lc['hours']:,.1f} h of {lc['month_hours']} so far)"
            if report["partial"]
            else f"{lc['hours']:,.0f} h)"
        )
    )
    lines.append(f"net offload:                      {report['net_offload']:>12,.2f} {cur}")
    return "\n".join(lines) + "\n"


def _value_notes(report: dict[str, Any]) -> list[str]:
    """Under the local value: what it would be without the cache discount, the tokens it had
    no cached count for, and the prices it used (those assumed, said so)."""
    lv, cur = report["local_value"], report["currency"]
    lines = [f"  without the cache discount:     {lv['without_cache_discount']:>12,.2f} {cur}"]
    if lv["uncounted_prompt_tokens"]:
        lines.append(
            f"  {lv['uncounted_prompt_tokens']:,} local prompt tokens had no cached count:"
            " valued at the full input price"
        )
    lines.append(f"prices used ({cur} per million tokens):")
    for backend, p in report["prices"].items():
        lines.append(
            f"  {backend}: input {p['input_per_mtok']:g}, output {p['output_per_mtok']:g}, cache read "
            f"{p['cache_read_per_mtok']:g}, cache write {p['cache_write_per_mtok']:g};"
            f" local uncached tokens as {p['uncached_local_as']}"
            + (f" (assumed: {', '.join(p['assumed'])})" if p["assumed"] else "")
        )
    return lines


def render(report: dict[str, Any], fmt: str = "table") -> str:
    if fmt == "json":
        return orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(("section", "key", "metric", "value"))
        writer.writerows(_csv_rows(report))
        return out.getvalue()
    if fmt == "table":
        return _table(report)
    raise ValueError(f"unknown format {fmt!r}: use table, json or csv")


def main(argv: list[str] | None = None) -> int:
    """``offload report [--config PATH] [--month YYYY-MM] [--format table|json|csv]``."""
    parser = argparse.ArgumentParser(prog="offload report", description="Monthly offload report.")
    parser.add_argument(
        "--config", default=None, help="config file (default: $OFFLOAD_CONFIG or config/router.yaml)"
    )
    parser.add_argument(
        "--month", default=None, help="calendar month in UTC, YYYY-MM (default: the current month)"
    )
    parser.add_argument("--format", default="table", choices=("table", "json", "csv"))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage error
        return int(exc.code or 0)
    args.month = args.month or current_month()
    try:
        month_bounds(args.month)
    except ValueError as exc:
        print(f"offload report: {exc}", file=sys.stderr)
        return 2
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"offload report: {exc}", file=sys.stderr)
        return 2
    try:
        report = build_report(config, args.month)
    except Exception as exc:  # database errors: one line, not a traceback
        print(f"offload report: cannot read usage from the database: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(render(report, args.format))
    return 0
