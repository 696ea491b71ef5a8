"""Alembic migrations on SQLite and (with OFFLOAD_TEST_POSTGRES_URL) PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from router.config import DatabaseConfig
from router.ledger import db
from router.ledger.models import Base
from router.ledger.writer import UsageRecorder


def _indexes(url: str) -> set[str]:
    engine = db.make_engine(url, pooled=False)
    try:
        with engine.connect() as conn:
            return {ix["name"] for ix in sa.inspect(conn).get_indexes("usage")}
    finally:
        engine.dispose()


def test_head_is_last_revision() -> None:
    assert db.head_revision() == "0010"


def test_upgrade_empty_database(db_url: str) -> None:
    assert db.current_revision(db_url) is None
    db.upgrade(db_url)
    assert db.current_revision(db_url) == db.head_revision()
    assert {"ix_usage_started_at", "ix_usage_started_at_route"} <= _indexes(db_url)
    db.ensure_schema(db_url)  # at head: no error, no change
    db.upgrade(db_url)  # idempotent


def test_upgrade_one_migration_behind_keeps_rows(db_url: str) -> None:
    db.upgrade(db_url, "0001")
    assert db.current_revision(db_url) == "0001"
    engine = db.make_engine(db_url, pooled=False)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO usage (request_id, started_at, endpoint, stream, status, fallback, prompt_tokens,"
                " completion_tokens, cached_tokens, reasoning_tokens, tokens_estimated, latency_ms)"
                " VALUES ('old', :at, 'chat', false, 200, false, 1, 2, 0, 0, false, 1.0)"
            ),
            {"at": datetime(2026, 10, 1, tzinfo=UTC)},
        )
    db.upgrade(db_url)
    assert db.current_revision(db_url) == db.head_revision()
    assert {"ix_usage_started_at_route", "ix_usage_response_id"} <= _indexes(db_url)
    with engine.connect() as conn:
        # Rows from before the api column were chat-family traffic: their api is their endpoint.
        assert conn.execute(sa.text("SELECT request_id, api FROM usage")).all() == [("old", "chat")]
    engine.dispose()


def test_ensure_schema_sqlite_upgrades_itself(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    db.upgrade(url, "0001")
    db.ensure_schema(url)
    assert db.current_revision(url) == db.head_revision()


@pytest.mark.parametrize("behind", [None, "0001"])
def test_ensure_schema_postgres_refuses_and_names_the_command(pg_url: str, behind: str | None) -> None:
    if behind:
        db.upgrade(pg_url, behind)
    with pytest.raises(db.SchemaOutOfDate, match=r"offload db upgrade --config /etc/offload.yaml"):
        db.ensure_schema(pg_url, config_path="/etc/offload.yaml")
    assert db.current_revision(pg_url) == behind  # nothing was migrated behind the operator's back


async def test_recorder_start_refuses_stale_postgres(pg_url: str, tmp_path: Path) -> None:
    db.upgrade(pg_url, "0001")
    recorder = UsageRecorder(DatabaseConfig(url=pg_url, spool_path=str(tmp_path / "spool.jsonl")))
    with pytest.raises(db.SchemaOutOfDate, match="offload db upgrade --config"):
        await recorder.start()


def test_models_match_migrations(db_url: str) -> None:
    """router.ledger.models and the migrations describe the same schema (no autogenerate diff)."""
    db.upgrade(db_url)
    engine = db.make_engine(db_url, pooled=False)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    assert diff == []


def test_db_main_upgrade_from_any_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    cfg = tmp_path / "offload.yaml"
    cfg.write_text(
        f"database: {{url: '{url}'}}\n"
        "backends:\n"
        "  local: {kind: vllm, base_url: 'http://127.0.0.1:1/v1', model: m}\n"
        "  cloud: {kind: openai, base_url: 'http://127.0.0.1:2/v1', model: c}\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    from router.ops.cli import main

    assert main(["db", "upgrade", "--config", str(cfg)]) == 0
    assert db.current_revision(url) == db.head_revision()
