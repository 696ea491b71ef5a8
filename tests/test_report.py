"""The monthly report on a hand-computed data set, and the Grafana SQL."""

from __future__ import annotations

import csv
import dataclasses
import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from router.config import Config, ReportConfig, parse_config
from router.ledger import db, report
from router.ledger.columns import row_values
from router.ledger.insert import insert_rows
from router.ledger.models import UsageRow

GRAFANA_SQL = Path(__file__).resolve().parent.parent / "deploy" / "sql" / "monthly_report.sql"


def config_for(url: str) -> Config:
    return parse_config(
        {
            "database": {"url": url},
            "backends": {
                "local": {
                    "kind": "vllm",
                    "base_url": "http://127.0.0.1:8888/v1",
                    "model": "laguna",
                    # 1080 / 36 = 30 a month; 50 W x 720 h (September) x 0.5 / 1000 = 18
                    "hardware": {"cost": 1080, "amortisation_months": 36, "watts": 50, "price_per_kwh": 0.5},
                },
                "cloud": {
                    "kind": "openai",
                    "base_url": "https://cloud.example/v1",
                    "model": "frontier",
                    "price": {"input_per_mtok": 2.0, "output_per_mtok": 10.0, "cached_input_per_mtok": 0.5},
                },
            },
            "routing": {"fallbacks": {"local": ["cloud"]}},
        },
        env={},
    )


def at(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def row(
    rid: str, started: datetime, route: str | None, intent: str, p: int, c: int, cached: int = 0, **kw: Any
) -> UsageRow:
    return UsageRow(
        request_id=rid,
        started_at=started,
        endpoint="chat",
        client="agents",
        model_requested="auto",
        stream=False,
        status=kw.pop("status", 200),
        intent=intent,
        route=route,
        backend=route,
        prompt_tokens=p,
        completion_tokens=c,
        cached_tokens=cached,
        **kw,
    )


DATA = [
    # September 2026 (30 days, in the past): the month under test; the first row sits exactly on the start bound.
    row("r1", at(2026, 9, 1, 0, 0, 0), "local", "coding", 10_000_000, 2_000_000, 4_000_000),
    row("r2", at(2026, 9, 15, 12, 0, 0), "local", "tools", 5_000_000, 1_000_000),
    row("r3", at(2026, 9, 20, 8, 30, 0), "cloud", "math", 3_000_000, 500_000, 1_000_000),
    row(
        "r4",
        datetime(2026, 9, 30, 23, 59, 59, 999_000, tzinfo=UTC),
        "cloud",
        "coding",
        2_000_000,
        200_000,
        fallback=True,
        fallback_reason="local_down",
        decided_route="local",
    ),
    row("r5", at(2026, 9, 10, 9, 0, 0), None, "writing", 0, 0, status=502, error_type="upstream_error"),
    # Routed to local but failed (box down, no fallback): counts as a request, not in the share.
    row(
        "r6", at(2026, 9, 11, 9, 0, 0), "local", "coding", 0, 0, status=503, error_type="no_backend_available"
    ),
    # Just outside the month on both sides: must not count.
    row("o1", datetime(2026, 8, 31, 23, 59, 59, 999_999, tzinfo=UTC), "local", "coding", 99_000_000, 1),
    row("o2", at(2026, 10, 1, 0, 0, 0), "cloud", "math", 77_000_000, 1),
]

# Hand-computed (prices per million tokens: input 2, cached 0.5, output 10):
#   cloud spend   r3: (2M x 2 + 1M x 0.5 + 0.5M x 10) / 1M = 9.5;  r4: (2M x 2 + 0.2M x 10) / 1M = 6  -> 15.5
#   local value   r1: (6M x 2 + 4M x 0.5 + 2M x 10) / 1M = 34;    r2: (5M x 2 + 1M x 10) / 1M = 20   -> 54
#   local cost    30 amortisation + 18 power = 48;  net offload 54 - 48 = 6
#   local share   answered requests 2 / 4 = 0.5 (r6 failed);  tokens 18M / 23.7M = 0.759494
EXPECTED_ROUTES = {
    "cloud": {
        "requests": 2,
        "errors": 0,
        "prompt_tokens": 5_000_000,
        "completion_tokens": 700_000,
        "cached_tokens": 1_000_000,
        "cache_write_tokens": 0,
        "uncounted_prompt_tokens": 0,
        "total_tokens": 5_700_000,
    },
    "local": {
        "requests": 3,
        "errors": 1,
        "prompt_tokens": 15_000_000,
        "completion_tokens": 3_000_000,
        "cached_tokens": 4_000_000,
        "cache_write_tokens": 0,
        "uncounted_prompt_tokens": 0,
        "total_tokens": 18_000_000,
    },
    "unrouted": {
        "requests": 1,
        "errors": 1,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cached_tokens": 0,
        "cache_write_tokens": 0,
        "uncounted_prompt_tokens": 0,
        "total_tokens": 0,
    },
}


@pytest.fixture
def loaded(db_url: str) -> Config:
    db.upgrade(db_url)
    engine = db.make_engine(db_url, pooled=False)
    insert_rows(engine, [row_values(r, False) for r in DATA])
    engine.dispose()
    return config_for(db_url)


def test_report_numbers(loaded: Config) -> None:
    rep = report.build_report(loaded, "2026-09")
    assert rep["empty"] is False and rep["partial"] is False
    assert rep["requests"] == 6 and rep["errors"] == 2
    assert rep["tokens"] == {
        "prompt_tokens": 20_000_000,
        "completion_tokens": 3_700_000,
        "cached_tokens": 5_000_000,
        "cache_write_tokens": 0,
        "uncounted_prompt_tokens": 0,
        "total_tokens": 23_700_000,
    }
    assert rep["by_route"] == EXPECTED_ROUTES
    assert {k: v["requests"] for k, v in rep["by_intent"].items()} == {
        "coding": 3,
        "math": 1,
        "tools": 1,
        "writing": 1,
    }
    assert rep["by_intent"]["coding"]["total_tokens"] == 14_200_000
    assert rep["local_share"] == {"requests": 0.5, "tokens": pytest.approx(0.759494)}
    assert rep["fallbacks"] == {"count": 1, "by_reason": {"local_down": 1}}
    assert rep["cloud_spend"]["total"] == pytest.approx(15.5)
    assert rep["cloud_spend"]["by_backend"]["cloud"]["cost"] == pytest.approx(15.5)
    assert rep["local_value"]["cloud_equivalent"] == pytest.approx(54.0)
    assert rep["local_value"]["by_backend"]["local"]["priced_as"] == "cloud"
    assert rep["local_cost"]["hours"] == 720
    assert rep["local_cost"]["amortisation"] == pytest.approx(30.0)
    assert rep["local_cost"]["power"] == pytest.approx(18.0)
    assert rep["local_cost"]["total"] == pytest.approx(48.0)
    assert rep["net_offload"] == pytest.approx(6.0)


def test_render_json(loaded: Config) -> None:
    out = orjson.loads(report.render(report.build_report(loaded, "2026-09"), "json"))
    assert out["month"] == "2026-09" and out["empty"] is False
    assert out["by_route"] == EXPECTED_ROUTES
    assert out["net_offload"] == pytest.approx(6.0)
    assert out["cloud_spend"]["total"] == pytest.approx(15.5)


def test_render_csv(loaded: Config) -> None:
    text = report.render(report.build_report(loaded, "2026-09"), "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == ["section", "key", "metric", "value"]
    cell = {(r["section"], r["key"], r["metric"]): r["value"] for r in rows}
    assert cell[("summary", "", "requests")] == "6"
    assert cell[("route", "local", "total_tokens")] == "18000000"
    assert cell[("route", "cloud", "requests")] == "2"
    assert cell[("intent", "coding", "requests")] == "3"
    assert cell[("fallbacks", "local_down", "count")] == "1"
    assert float(cell[("cloud_spend", "", "total")]) == pytest.approx(15.5)
    assert float(cell[("local_value", "", "cloud_equivalent")]) == pytest.approx(54.0)
    assert float(cell[("local_cost", "", "total")]) == pytest.approx(48.0)
    assert float(cell[("summary", "", "net_offload")]) == pytest.approx(6.0)
    assert float(cell[("summary", "", "local_share_tokens")]) == pytest.approx(0.759494)


def test_render_table(loaded: Config) -> None:
    text = report.render(report.build_report(loaded, "2026-09"), "table")
    assert text.startswith("Offload report 2026-09 (UTC)\n")
    assert "local share: 50.0% of requests, 75.9% of tokens" in text
    assert "fallbacks: 1 (local_down 1)" in text
    lines = {line.split(":")[0].strip(): line for line in text.splitlines() if ":" in line}
    assert lines["cloud spend (actual)"].split()[-2:] == ["15.50", "USD"]
    assert (
        "54.00" in lines["local tokens at cloud prices"]
        and "priced as cloud" in lines["local tokens at cloud prices"]
    )
    assert (
        "48.00" in lines["local cost (hardware + power)"]
        and "30.00 amortisation + 18.00 power over 720 h" in text
    )
    assert lines["net offload"].split()[-2:] == ["6.00", "USD"]
    route_local = next(line for line in text.splitlines() if line.startswith("local "))
    assert "18,000,000" in route_local


def test_empty_month(loaded: Config) -> None:
    rep = report.build_report(loaded, "2026-06")
    assert rep["empty"] is True and rep["requests"] == 0 and rep["by_route"] == {}
    assert orjson.loads(report.render(rep, "json"))["empty"] is True
    assert report.render(rep, "table") == "No usage recorded in 2026-06 (UTC): nothing to report.\n"
    assert "summary,,empty,true" in report.render(rep, "csv")


def test_month_in_progress_is_flagged(loaded: Config) -> None:
    assert report.build_report(loaded, "2099-01")["partial"] is True


def test_month_in_progress_accrues_hardware_and_power_by_elapsed_time(loaded: Config) -> None:
    """Six hours into September the box has cost 6/720 of its month, not all of it (the whole
    month's 48.00 on the first morning made the net offload look like a loss)."""
    rep = report.build_report(loaded, "2026-09", now=at(2026, 9, 1, 6))
    assert rep["partial"] is True
    assert rep["local_cost"]["hours"] == 6 and rep["local_cost"]["month_hours"] == 720
    assert rep["local_cost"]["amortisation"] == pytest.approx(30 * 6 / 720)
    assert rep["local_cost"]["power"] == pytest.approx(18 * 6 / 720)
    text = report.render(rep, "table")
    assert "[month in progress]" in text and "over 6.0 h of 720 so far" in text
    # A past month pays for all of it; a month not begun for none.
    assert report.build_report(loaded, "2026-09", now=at(2026, 10, 3))["local_cost"]["total"] == 48.0
    assert report.build_report(loaded, "2026-09", now=at(2026, 8, 3))["local_cost"]["total"] == 0.0


def test_currency_is_shown_wherever_money_is(loaded: Config) -> None:
    config = loaded.model_copy(update={"report": ReportConfig(currency="EUR")})
    rep = report.build_report(config, "2026-09")
    assert rep["currency"] == "EUR"
    money = [line for line in report.render(rep, "table").splitlines() if " EUR" in line]
    assert [line.split(":")[0].strip() for line in money] == [
        "cloud spend (actual)",
        "local tokens at cloud prices",
        "without the cache discount",
        "local cost (hardware + power)",
        "net offload",
    ]
    assert "summary,,currency,EUR" in report.render(rep, "csv")


def test_database_never_written_is_an_empty_report(tmp_path: Path) -> None:
    rep = report.build_report(config_for(f"sqlite:///{tmp_path}/fresh.db"), "2026-09")
    assert rep["empty"] is True
    assert not (tmp_path / "fresh.db").exists()
    db.upgrade(f"sqlite:///{tmp_path}/fresh.db")  # schema, no rows
    assert report.build_report(config_for(f"sqlite:///{tmp_path}/fresh.db"), "2026-09")["empty"] is True


@pytest.mark.parametrize("month", ["2026-13", "2026-1", "26-11", "november", "2026-11-01", ""])
def test_bad_month(month: str) -> None:
    with pytest.raises(ValueError, match="YYYY-MM"):
        report.month_bounds(month)


def test_month_bounds_december() -> None:
    assert report.month_bounds("2026-12") == (at(2026, 12, 1), at(2027, 1, 1))


def _write_config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "offload.yaml"
    path.write_text(
        f"database: {{url: '{url}'}}\n"
        "backends:\n"
        "  local: {kind: vllm, base_url: 'http://127.0.0.1:8888/v1', model: laguna,\n"
        "          hardware: {cost: 1080, amortisation_months: 36, watts: 50, price_per_kwh: 0.5}}\n"
        "  cloud: {kind: openai, base_url: 'https://cloud.example/v1', model: frontier,\n"
        "          price: {input_per_mtok: 2.0, output_per_mtok: 10.0, cached_input_per_mtok: 0.5}}\n"
        "routing: {fallbacks: {local: [cloud]}}\n"
    )
    return path


def test_main(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    db.upgrade(url)
    engine = db.make_engine(url, pooled=False)
    insert_rows(engine, [row_values(r, False) for r in DATA])
    engine.dispose()
    path = _write_config(tmp_path, url)
    assert report.main(["--config", str(path), "--month", "2026-09", "--format", "json"]) == 0
    assert orjson.loads(capsys.readouterr().out)["net_offload"] == pytest.approx(6.0)
    assert report.main(["--config", str(path), "--month", "2026-09"]) == 0
    assert "net offload" in capsys.readouterr().out
    assert report.main(["--config", str(path), "--month", "2026-13"]) == 2
    assert "--month must look like YYYY-MM" in capsys.readouterr().err
    # --month defaults to the current month (nothing recorded in it here).
    assert report.main(["--config", str(path)]) == 0
    assert f"No usage recorded in {datetime.now(UTC):%Y-%m} (UTC)" in capsys.readouterr().out
    assert report.main(["--config", str(tmp_path / "missing.yaml"), "--month", "2026-09"]) == 2


def test_grafana_sql_matches_build_report(pg_url: str) -> None:
    db.upgrade(pg_url)
    engine = db.make_engine(pg_url, pooled=False)
    # Evidence, not traffic: a gate run's request and a shadow run, both left out by both.
    evidence = [
        dataclasses.replace(DATA[0], request_id="gate-1", gate_run="a1b2c3"),
        dataclasses.replace(DATA[0], request_id="shadow-1", shadow_of=DATA[0].request_id),
    ]
    insert_rows(engine, [row_values(r, False) for r in [*DATA, *evidence]])
    sql = GRAFANA_SQL.read_text().replace("${month}", "2026-09")
    with engine.connect() as conn:
        got = {r.route: dict(r._mapping) for r in conn.exec_driver_sql(sql)}
    engine.dispose()
    rep = report.build_report(config_for(pg_url), "2026-09")
    assert set(got) == set(rep["by_route"]) == {"local", "cloud", "unrouted"}
    for route, counts in rep["by_route"].items():
        for key in ("requests", *report._TOKENS, "total_tokens"):
            assert got[route][key] == counts[key], (route, key)


def test_local_tokens_are_priced_as_the_cloud_backend_they_fall_back_to() -> None:
    """The fallback chain as the proxy resolves it: aliases and route-keyed entries too."""
    backends = {
        "spark": {"kind": "vllm", "base_url": "http://a/v1", "model": "m"},
        "oa": {"kind": "openai", "base_url": "http://b/v1", "model": "m", "api_key": "k"},
        "oa2": {"kind": "openai", "base_url": "http://c/v1", "model": "m", "api_key": "k"},
    }
    by_alias = parse_config({"backends": backends, "routing": {"fallbacks": {"spark": ["cloud"]}}}, env={})
    assert report.reference_cloud(by_alias, "spark") == "oa"  # "cloud" means the first cloud backend
    by_route = parse_config({"backends": backends, "routing": {"fallbacks": {"local": ["oa2"]}}}, env={})
    assert report.reference_cloud(by_route, "spark") == "oa2"  # keyed by route, as Pool.candidates reads it
    assert report.reference_cloud(by_route, "removed-box") == "oa"  # no longer configured: the first cloud
