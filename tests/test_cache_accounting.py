"""Local tokens valued as the cloud would have billed them, on a month of agent traffic.

An agent resends its whole history every turn, so on the cloud most of a turn is a cache
read. The report's offload figure is checked against a hand calculation, next to what the
old valuation (every prompt token at the input price) gave; the Grafana SQL and the console
read the same counts.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from router.config import Config, parse_config
from router.ledger import db, report
from router.ledger.columns import row_values
from router.ledger.insert import insert_rows
from router.ledger.models import UsageRow

GRAFANA_SQL = Path(__file__).resolve().parent.parent / "deploy" / "sql" / "monthly_report.sql"
MONTH = "2026-11"  # 30 days


def config_for(url: str) -> Config:
    return parse_config(
        {
            "database": {"url": url},
            "backends": {
                "spark": {
                    "kind": "vllm",
                    "base_url": "http://127.0.0.1:8888/v1",
                    "model": "laguna",
                    "hardware": {"cost": 1080, "amortisation_months": 36},  # 30 a month, no power
                },
                "cloud": {
                    "kind": "openai",
                    "base_url": "https://cloud.example/v1",
                    "model": "frontier",
                    "price": {
                        "input_per_mtok": 1.25,
                        "output_per_mtok": 10.0,
                        "cached_input_per_mtok": 0.125,
                    },
                },
                # No cache prices set: Anthropic's own multipliers are assumed (0.3 and 3.75).
                "claude": {
                    "kind": "anthropic",
                    "base_url": "https://anthropic.example",
                    "model": "claude-sonnet-4-5",
                    "price": {"input_per_mtok": 3.0, "output_per_mtok": 15.0},
                },
            },
            "routing": {"fallbacks": {"spark": ["cloud"]}},
        },
        env={},
    )


def turn(rid: str, at: datetime, api: str, prompt: int, cached: int | None, **kw: object) -> UsageRow:
    fields: dict[str, object] = {
        "request_id": rid,
        "started_at": at,
        "endpoint": api,
        "api": api,
        "client": "agents",
        "model_requested": "auto",
        "stream": True,
        "status": 200,
        "route": "local",
        "backend": "spark",
        "prompt_tokens": prompt,
        "completion_tokens": 500,
        "cached_tokens": cached,
    }
    fields.update(kw)
    return UsageRow(**fields)  # type: ignore[arg-type]


def claude_code_session(day: int) -> list[UsageRow]:
    """30 turns of one Claude Code session on the box (Messages): a 10,000-token start that
    grows by 2,000 tokens a turn, everything before the new turn a prefix-cache hit."""
    start = datetime(2026, 11, day, 9, tzinfo=UTC)
    return [
        turn(
            f"cc-{day}-{n}",
            start + timedelta(minutes=n),
            "messages",
            10_000 + 2_000 * (n - 1),
            0 if n == 1 else 10_000 + 2_000 * (n - 2),
        )
        for n in range(1, 31)
    ]


def month_of_agents() -> list[UsageRow]:
    rows = [r for day in range(1, 21) for r in claude_code_session(day)]  # 20 working days
    # One Codex session (chat) on a box without --enable-prompt-tokens-details: no cached count.
    rows += [
        turn(f"codex-{n}", datetime(2026, 11, 25, 14, n, tzinfo=UTC), "chat", 5_000 + 1_000 * (n - 1), None,
             completion_tokens=300)
        for n in range(1, 11)
    ]  # fmt: skip
    # One cloud turn on Anthropic: 2,000 plain input, 8,000 written to the cache, 40,000 read.
    rows.append(
        turn("claude-1", datetime(2026, 11, 26, 10, tzinfo=UTC), "messages", 50_000, 40_000,
             cache_write_tokens=8_000, completion_tokens=1_000, route="cloud", backend="claude")
    )  # fmt: skip
    return rows


# Hand calculation (prices per million tokens).
# One Claude Code session, valued as Anthropic (input 3, output 15; assumed cache read
# 0.1 x 3 = 0.3, cache write 1.25 x 3 = 3.75):
#   prompt   sum(10,000 + 2,000(n-1), n=1..30) = 300,000 + 2,000 x 435 = 1,170,000
#   cached   sum(10,000 + 2,000(n-2), n=2..30) = 290,000 + 2,000 x 406 = 1,102,000 (94 %)
#   written  the rest, what each turn adds     = 1,170,000 - 1,102,000 =    68,000
#   output   30 x 500 = 15,000
#   value    1,102,000 x 0.3 + 68,000 x 3.75 + 15,000 x 15 = 330,600 + 255,000 + 225,000 -> 0.8106
#   old      1,170,000 x 3 + 15,000 x 15 = 3,510,000 + 225,000                           -> 3.735
# 20 sessions: 16.212 (old 74.70).
# The Codex session, valued as the OpenAI backend (input 1.25, output 10), no cached count:
#   prompt   sum(5,000 + 1,000(n-1), n=1..10) = 50,000 + 45,000 = 95,000, all at the input price
#   value    95,000 x 1.25 + 3,000 x 10 = 118,750 + 30,000 -> 0.14875 (old: the same)
# Local value 16.212 + 0.14875 = 16.36075 (old 74.84875); hardware 30: net -13.63925 (old +44.84875).
# Cloud spend, the Anthropic turn: 2,000 x 3 + 40,000 x 0.3 + 8,000 x 3.75 + 1,000 x 15
#   = 6,000 + 12,000 + 30,000 + 15,000 -> 0.063 (the writes as plain input gave 0.057).
VALUE, OLD_VALUE, UNCOUNTED = 16.36075, 74.84875, 95_000


@pytest.fixture
def agents_month(db_url: str) -> Config:
    db.upgrade(db_url)
    engine = db.make_engine(db_url, pooled=False)
    insert_rows(engine, [row_values(r, False) for r in month_of_agents()])
    engine.dispose()
    return config_for(db_url)


def test_offload_figure_is_what_the_cloud_would_have_billed(agents_month: Config) -> None:
    rep = report.build_report(agents_month, MONTH)
    value = rep["local_value"]
    assert value["cloud_equivalent"] == pytest.approx(VALUE)
    assert value["without_cache_discount"] == pytest.approx(OLD_VALUE)
    assert value["uncounted_prompt_tokens"] == UNCOUNTED
    assert value["by_backend"]["spark"]["priced_as_by_api"] == {"chat": "cloud", "messages": "claude"}
    assert rep["local_cost"]["total"] == pytest.approx(30.0)
    # The cache turns a claimed saving of 44.85 into a box that does not yet pay for itself.
    assert rep["net_offload"] == pytest.approx(VALUE - 30.0)
    assert rep["cloud_spend"]["by_backend"]["claude"]["cost"] == pytest.approx(0.063)
    assert rep["prices"]["claude"]["cache_read_per_mtok"] == pytest.approx(0.3)
    assert rep["prices"]["claude"]["cache_write_per_mtok"] == pytest.approx(3.75)
    assert rep["prices"]["claude"]["assumed"] == ["cache read = 0.1 x input", "cache write = 1.25 x input"]
    assert rep["prices"]["cloud"]["assumed"] == []


def test_table_and_csv_say_which_prices_and_which_tokens_had_no_count(agents_month: Config) -> None:
    rep = report.build_report(agents_month, MONTH)
    text = report.render(rep, "table")
    assert re.search(r"local tokens at cloud prices: +16\.36 USD", text)
    assert re.search(r"without the cache discount: +74\.85 USD", text)
    assert "95,000 local prompt tokens had no cached count: valued at the full input price" in text
    assert (
        "claude: input 3, output 15, cache read 0.3, cache write 3.75; local uncached tokens as cache write"
        " (assumed: cache read = 0.1 x input, cache write = 1.25 x input)" in text
    )
    assert (
        "cloud: input 1.25, output 10, cache read 0.125, cache write 1.25; local uncached tokens as input\n"
        in text
    )
    cells = {
        (r[0], r[1], r[2]): r[3]
        for r in (line.split(",", 3) for line in report.render(rep, "csv").splitlines())
    }
    assert float(cells[("local_value", "", "cloud_equivalent")]) == pytest.approx(VALUE)
    assert float(cells[("local_value", "", "without_cache_discount")]) == pytest.approx(OLD_VALUE)
    assert cells[("local_value", "", "uncounted_prompt_tokens")] == str(UNCOUNTED)
    assert cells[("prices", "claude", "assumed")] == "cache read = 0.1 x input; cache write = 1.25 x input"


def test_grafana_sql_reads_the_counts_the_report_values(pg_url: str) -> None:
    db.upgrade(pg_url)
    engine = db.make_engine(pg_url, pooled=False)
    insert_rows(engine, [row_values(r, False) for r in month_of_agents()])
    with engine.connect() as conn:
        got = {
            r.route: dict(r._mapping)
            for r in conn.exec_driver_sql(GRAFANA_SQL.read_text().replace("${month}", MONTH))
        }
    engine.dispose()
    rep = report.build_report(config_for(pg_url), MONTH)
    assert got["local"]["cached_tokens"] == 20 * 1_102_000
    assert got["local"]["uncounted_prompt_tokens"] == UNCOUNTED
    assert got["cloud"]["cache_write_tokens"] == 8_000
    for route, counts in rep["by_route"].items():
        assert {k: got[route][k] for k in counts if k != "errors"} == {
            k: v for k, v in counts.items() if k != "errors"
        }
