"""The per-day rollup (``usage_daily``, migration 0006) against the raw ``usage`` rows.

``offload report`` and the console's daily trend read the rollup; these tests hold them
to what aggregating the raw rows gives (the statements they ran before the rollup), on
rows that arrive every way the proxy writes them (batches, replays, a recovered journal,
rows written twice), that are pruned or edited by hand, and on a database migrated with
rows already in it.
"""

from __future__ import annotations

import random
import threading
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import orjson
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from router.config import Config, DatabaseConfig
from router.console import queries
from router.ledger import db, report
from router.ledger.columns import row_values
from router.ledger.insert import insert_rows
from router.ledger.models import UsageRow, usage_table
from router.ledger.writer import UsageRecorder
from tests.test_report import config_for

MONTHS = ("2026-08", "2026-09", "2026-10")
TOKENS = (
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "uncounted_prompt_tokens",
)
KEYS = ("route", "backend", "intent", "api", "fallback", "fallback_reason")


def edge_rows() -> list[UsageRow]:
    """Rows on the month bounds, in another time zone, and shadow runs of real rows."""
    plus2 = timezone(timedelta(hours=2))
    at = [
        datetime(2026, 8, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(2026, 9, 1, tzinfo=UTC),
        datetime(2026, 9, 30, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(2026, 10, 1, 1, 30, tzinfo=plus2),  # 2026-09-30 23:30 UTC: September
        datetime(2026, 10, 1, tzinfo=UTC),
    ]
    rows = [
        make_row(f"edge-{i}", t, route="local", backend="spark", prompt_tokens=1000 + i)
        for i, t in enumerate(at)
    ]
    rows += [
        make_row(f"shadow-{i}", t, route="local", backend="spark", shadow_of=f"edge-{i}", arm="spark")
        for i, t in enumerate(at)
    ]
    return rows


def make_row(rid: str, started: datetime, **kw: Any) -> UsageRow:
    fields: dict[str, Any] = {
        "request_id": rid,
        "started_at": started,
        "endpoint": "chat",
        "client": "team",
        "model_requested": "auto",
        "stream": False,
        "status": 200,
        "prompt_tokens": 100,
        "completion_tokens": 10,
    }
    fields.update(kw)
    return UsageRow(**fields)


def varied_rows(n: int = 500, seed: int = 7) -> list[UsageRow]:
    """Real traffic from late August to early October: every route (and none), backends,
    intents (and none), APIs, errors of both kinds, fallbacks with and without a reason,
    shadow runs."""
    rnd = random.Random(seed)
    start = datetime(2026, 8, 29, tzinfo=UTC)
    rows = edge_rows()
    for i in range(n):
        route = rnd.choice(["local", "cloud", None])
        fell_back = route == "cloud" and rnd.random() < 0.2
        rows.append(
            make_row(
                f"r-{i:04d}",
                start + timedelta(seconds=rnd.randrange(36 * 86_400), microseconds=rnd.randrange(10**6)),
                route=route,
                backend={"local": rnd.choice(["spark", "spark2"]), "cloud": "cloud", None: None}[route],
                intent=rnd.choice(["coding", "math", "tools", None]),
                api=rnd.choice(["chat", "responses", "messages", "embeddings"]),
                status=rnd.choice([200] * 8 + [502, 404]),
                error_type=rnd.choice([None] * 9 + ["client_disconnected"]),
                fallback=fell_back,
                fallback_reason=rnd.choice(["backend_down", "http_503", None]) if fell_back else None,
                shadow_of=f"r-{i - 1:04d}" if i and rnd.random() < 0.1 else None,
                prompt_tokens=rnd.randrange(50_000),
                completion_tokens=rnd.randrange(5_000),
                # None: the upstream reported no cached count (its prompt is "uncounted").
                cached_tokens=rnd.choice([None, 0, rnd.randrange(1_000)]),
                cache_write_tokens=rnd.choice([0, rnd.randrange(1_000)]),
            )
        )
    return rows


# ------------------------------------------------------------------ the raw rows


def raw_month(conn: Connection, start: datetime, end: datetime) -> list[tuple[Any, ...]]:
    """What build_report read before the rollup: one GROUP BY over the month's rows."""
    u = usage_table.c
    failed = (u.status >= 400) | u.error_type.is_not(None)
    stmt = (
        sa.select(
            *(u[k] for k in KEYS),
            sa.func.count().label("requests"),
            sa.func.sum(sa.case((failed, 1), else_=0)).label("errors"),
            sa.func.sum(u.prompt_tokens).label("prompt_tokens"),
            sa.func.sum(u.completion_tokens).label("completion_tokens"),
            sa.func.coalesce(sa.func.sum(u.cached_tokens), 0).label("cached_tokens"),
            sa.func.coalesce(sa.func.sum(u.cache_write_tokens), 0).label("cache_write_tokens"),
            sa.func.sum(sa.case((u.cached_tokens.is_(None), u.prompt_tokens), else_=0)).label(
                "uncounted_prompt_tokens"
            ),
        )
        .where(u.started_at >= start, u.started_at < end, u.shadow_of.is_(None))
        .group_by(*(u[k] for k in KEYS))
    )
    return sorted((_plain(dict(r._mapping)) for r in conn.execute(stmt)), key=repr)


def raw_daily(conn: Connection, start: datetime, end: datetime) -> list[queries.Day]:
    """What the console's daily() read before the rollup: the rows grouped by UTC day and route."""
    u = usage_table.c
    if conn.dialect.name == "sqlite":
        day = sa.func.substr(u.started_at, 1, 10)
    else:
        day = sa.func.to_char(sa.func.timezone("UTC", u.started_at), "YYYY-MM-DD")
    answered = ~((u.status >= 400) | u.error_type.is_not(None))
    stmt = (
        sa.select(
            day.label("day"),
            u.route,
            sa.func.count().label("requests"),
            sa.func.sum(sa.case((answered, 1), else_=0)).label("answered"),
            sa.func.sum(sa.case((u.fallback == sa.true(), 1), else_=0)).label("fallbacks"),
        )
        .where(u.started_at >= start, u.started_at < end, u.shadow_of.is_(None))
        .group_by(day, u.route)
    )
    totals: dict[str, list[int]] = {}
    for r in conn.execute(stmt):
        t = totals.setdefault(r.day, [0, 0, 0, 0])
        t[0] += r.requests
        t[3] += r.fallbacks
        if r.route in ("local", "cloud"):
            t[1 if r.route == "local" else 2] += r.answered
    return [
        queries.Day(d, *totals.get(d.isoformat(), [0, 0, 0, 0])) for d in queries.days_between(start, end)
    ]


def _plain(row: dict[str, Any]) -> tuple[Any, ...]:
    keys = (bool(row[k]) if k == "fallback" else row[k] for k in KEYS)
    return (*keys, *(int(row[k]) for k in ("requests", "errors", *TOKENS)))


def assert_rollup_equals_raw(url: str, rows: list[UsageRow] | None = None) -> None:
    """For each month: the rollup's sums, the report and the daily trend are those of the raw
    rows; with ``rows`` given, the totals are also those of the distinct real rows by hand."""
    config = config_for(url)
    engine = db.make_engine(url, pooled=False)
    try:
        for month in MONTHS:
            start, end = report.month_bounds(month)
            with engine.connect() as conn:
                raw = raw_month(conn, start, end)
                sums = conn.execute(report.month_sums(start, end))
                rolled = sorted((_plain(dict(r._mapping)) for r in sums), key=repr)
                assert rolled == raw, month
                assert queries.daily(conn, start, end) == raw_daily(conn, start, end), month
            got = report.build_report(config, month)
            assert got == report_from_raw(config, month, engine), month
            if rows is not None:
                distinct = {r.request_id: r for r in rows}.values()
                real = [r for r in distinct if r.shadow_of is None and start <= r.started_at < end]
                assert got["requests"] == len(real)
                assert got["errors"] == sum(r.status >= 400 or r.error_type is not None for r in real)
                assert got["tokens"]["prompt_tokens"] == sum(r.prompt_tokens for r in real)
                assert got["fallbacks"]["count"] == sum(r.fallback for r in real)
    finally:
        engine.dispose()


def report_from_raw(config: Config, month: str, engine: Engine) -> dict[str, Any]:
    """build_report with its read replaced by the raw rows' aggregate."""

    def from_raw(_config: Config, start: datetime, end: datetime) -> list[dict[str, Any]]:
        with engine.connect() as conn:
            names = (*KEYS, "requests", "errors", *TOKENS)
            return [dict(zip(names, r, strict=True)) for r in raw_month(conn, start, end)]

    original = report._query
    report._query = from_raw
    try:
        return report.build_report(config, month)
    finally:
        report._query = original


def write(url: str, rows: list[UsageRow]) -> int:
    engine = db.make_engine(url, pooled=False)
    try:
        return insert_rows(engine, [row_values(r, False) for r in rows])
    finally:
        engine.dispose()


def write_at_revision(url: str, rows: list[UsageRow]) -> None:
    """``write`` into an older schema: only the columns its usage table has."""
    engine = db.make_engine(url, pooled=False)
    try:
        with engine.begin() as conn:
            present = [c["name"] for c in sa.inspect(conn).get_columns("usage") if c["name"] != "id"]
            table = sa.table("usage", *(sa.column(n, usage_table.c[n].type) for n in present))
            values = [{n: v for n, v in row_values(r, False).items() if n in present} for r in rows]
            if not next(c for c in sa.inspect(conn).get_columns("usage") if c["name"] == "cached_tokens")[
                "nullable"
            ]:
                for v in values:  # before 0009 a missing cached count was stored as 0
                    v["cached_tokens"] = v["cached_tokens"] or 0
            conn.execute(sa.insert(table), values)
    finally:
        engine.dispose()


def execute(url: str, sql: str) -> None:
    engine = db.make_engine(url, pooled=False)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(sql))
    finally:
        engine.dispose()


# ------------------------------------------------------------------ tests


def test_report_and_daily_from_the_rollup_equal_the_raw_rows(db_url: str) -> None:
    db.upgrade(db_url)
    rows = varied_rows()
    random.Random(3).shuffle(rows)
    assert write(db_url, rows[:300]) == 300
    # A replayed spool: the same rows again, with new ones among them; only the new count.
    assert write(db_url, rows) == len(rows) - 300
    assert write(db_url, rows[100:200]) == 0
    assert_rollup_equals_raw(db_url, rows)
    september = report.build_report(config_for(db_url), "2026-09")
    assert september["requests"] > 100 and september["errors"] > 0 and september["fallbacks"]["count"] > 0
    assert report.build_report(config_for(db_url), "2026-07")["empty"] is True


def test_rollup_buckets_by_utc_day_whatever_the_sessions_time_zone(pg_url: str) -> None:
    """A writer whose PostgreSQL session is at UTC+14 still counts each row on its UTC day."""
    db.upgrade(pg_url)
    url = sa.make_url(pg_url)
    far_east = url.update_query_dict({"options": f"{url.query['options']} -ctimezone=Pacific/Kiritimati"})
    rows = edge_rows()
    assert write(far_east.render_as_string(hide_password=False), rows) == len(rows)
    assert_rollup_equals_raw(pg_url, rows)
    engine = db.make_engine(pg_url, pooled=False)
    with engine.connect() as conn:
        september = queries.daily(conn, *report.month_bounds("2026-09"))
    engine.dispose()
    # 1 September 00:00 and the three rows of 30 September (one written as 1 October, +02:00).
    assert {d.day: d.requests for d in september if d.requests} == {date(2026, 9, 1): 1, date(2026, 9, 30): 2}


async def test_writer_spool_replay_and_journal_recovery_count_each_row_once(
    db_url: str, tmp_path: Path
) -> None:
    """Rows arrive through the writer, an interrupted replay, the spool and the journal of a
    killed process, overlapping each other and the database: each real row counts once."""
    db.upgrade(db_url)
    rows = varied_rows(300, seed=11)
    write(db_url, rows[:100])  # committed before the "crash"
    spool = tmp_path / "spool"
    spool.mkdir()

    def lines(part: list[UsageRow]) -> bytes:
        return b"".join(orjson.dumps(row_values(r, False)) + b"\n" for r in part)

    (spool / "usage.jsonl.replay").write_bytes(lines(rows[50:150]))  # interrupted replay
    (spool / "usage.jsonl").write_bytes(lines(rows[120:220]))
    (spool / "usage.journal-0").write_bytes(lines(rows[200:260]))  # a killed process's journal
    recorder = UsageRecorder(
        DatabaseConfig(
            url=db_url, spool_path=str(spool / "usage.jsonl"), batch_size=64, flush_interval_s=0.05
        )
    )
    await recorder.start()
    for r in rows[240:]:
        recorder.record(r)
    await recorder.stop()
    assert recorder.rows_written == len(rows) - 100  # each row not in the database, once
    assert_rollup_equals_raw(db_url, rows)


def test_pruning_and_edits_by_hand_keep_the_rollup_right(db_url: str) -> None:
    db.upgrade(db_url)
    rows = varied_rows(300, seed=5)
    write(db_url, rows)
    # Retention by hand: August pruned (there is no pruning in the proxy itself).
    execute(db_url, "DELETE FROM usage WHERE started_at < '2026-09-01 00:00:00+00'")
    execute(
        db_url,
        "UPDATE usage SET route = 'cloud', backend = 'cloud' WHERE route = 'local' AND intent = 'math'",
    )
    execute(db_url, "UPDATE usage SET shadow_of = 'r-0001' WHERE request_id IN ('r-0002', 'r-0003')")
    assert_rollup_equals_raw(db_url)
    assert report.build_report(config_for(db_url), "2026-08")["empty"] is True
    execute(db_url, "DELETE FROM usage" if db_url.startswith("sqlite") else "TRUNCATE usage")
    assert all(report.build_report(config_for(db_url), m)["empty"] for m in MONTHS)
    assert_rollup_equals_raw(db_url)


def test_concurrent_writers_share_rollup_rows_without_deadlock(pg_url: str) -> None:
    """Replicas writing at once: their batches add to the same rollup rows, each in its own
    order (the rows' request ids are their own, as each replica's are), and each batch is
    written twice (a replay): no deadlock, every row counted once."""
    db.upgrade(pg_url)
    rows = varied_rows(800, seed=13)
    engine = db.make_engine(pg_url)
    errors: list[BaseException] = []

    def writer(mine: list[UsageRow], seed: int) -> None:
        random.Random(seed).shuffle(mine)
        try:
            for i in range(0, len(mine), 40):
                batch = [row_values(r, False) for r in mine[i : i + 40]]
                insert_rows(engine, batch)
                insert_rows(engine, batch)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(rows[k::4], k)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    engine.dispose()
    assert errors == []
    assert_rollup_equals_raw(pg_url, rows)


def test_upgrade_backfills_existing_rows_and_downgrade_removes_the_rollup(db_url: str) -> None:
    db.upgrade(db_url, "0005")
    rows = varied_rows(300, seed=17)
    write_at_revision(db_url, rows[:200])
    db.upgrade(db_url)
    assert_rollup_equals_raw(db_url, rows[:200])
    db.upgrade(db_url, "0006")  # idempotent

    from alembic import command

    cfg = db.alembic_config()
    engine = db.make_engine(db_url, pooled=False)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0005")
    with engine.connect() as conn:
        assert not sa.inspect(conn).has_table("usage_daily")
    engine.dispose()
    write_at_revision(db_url, rows[200:])  # no trigger left behind to fail the insert
    with pytest.raises(db.SchemaOutOfDate, match="offload db upgrade"):
        report.build_report(config_for(db_url), "2026-09")
    db.upgrade(db_url)
    assert_rollup_equals_raw(db_url, rows)


def test_upgrade_to_0009_tells_a_cached_count_never_reported_from_zero_hits(db_url: str) -> None:
    """Before 0009 a row stored 0 for both; the upgrade makes a local (or estimated) row's 0
    unknown, as vLLM reported no count, and the rollup moves those prompts to "uncounted"."""
    db.upgrade(db_url, "0008")
    day = datetime(2026, 9, 2, tzinfo=UTC)
    write_at_revision(
        db_url,
        [
            make_row("local-0", day, route="local", backend="spark", cached_tokens=0),
            make_row("local-hit", day, route="local", backend="spark", cached_tokens=60),
            make_row("cloud-0", day, route="cloud", backend="cloud", cached_tokens=0),
            make_row(
                "estimated", day, route="cloud", backend="cloud", cached_tokens=0, tokens_estimated=True
            ),
        ],
    )
    db.upgrade(db_url)

    def cached() -> dict[str, int | None]:
        engine = db.make_engine(db_url, pooled=False)
        with engine.connect() as conn:
            found = dict(conn.execute(sa.text("SELECT request_id, cached_tokens FROM usage")).all())
        engine.dispose()
        return found

    assert cached() == {"local-0": None, "local-hit": 60, "cloud-0": 0, "estimated": None}
    september = report.build_report(config_for(db_url), "2026-09")
    assert september["local_value"]["uncounted_prompt_tokens"] == 100  # local-0's prompt
    assert september["by_route"]["cloud"]["uncounted_prompt_tokens"] == 100  # the estimate's
    assert_rollup_equals_raw(db_url)

    from alembic import command

    cfg = db.alembic_config()
    engine = db.make_engine(db_url, pooled=False)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0008")
    engine.dispose()
    assert cached() == {"local-0": 0, "local-hit": 60, "cloud-0": 0, "estimated": 0}
    db.upgrade(db_url)
    assert_rollup_equals_raw(db_url)


def test_rollup_reads_whole_utc_days_only(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    db.upgrade(url)
    engine = db.make_engine(url, pooled=False)
    with engine.connect() as conn, pytest.raises(ValueError, match="whole UTC days"):
        queries.daily(conn, datetime(2026, 9, 1, 12, tzinfo=UTC), datetime(2026, 10, 1, tzinfo=UTC))
    engine.dispose()
