"""gate: usage rows of `offload gate` runs marked and left out of the rollup; runs and results

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

``usage.gate_run`` names the gate run a request belonged to (``x-offload-gate``, honoured
from an admin key only). Such rows are evidence, not traffic: the daily rollup leaves them
out as it leaves out shadow runs, so ``offload report`` and the console's Month view never
count them. The rollup's triggers (0006) are rebuilt with that one extra condition: 0006's
SQL is taken as it stands and each "shadow_of IS NULL" gains "AND gate_run IS NULL" (no
gate row exists before this revision, so nothing is backfilled). ``gate_runs`` and
``gate_results`` hold the runs and their graded cases.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels = None
depends_on = None

_REAL = re.compile(r"\b((?:NEW\.|OLD\.)?)shadow_of IS NULL")


def _rollup() -> ModuleType:
    """Revision 0006's module (its file name is not an import name)."""
    path = Path(__file__).with_name("0006_usage_daily_rollup.py")
    spec = importlib.util.spec_from_file_location("_offload_rollup_0006", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _without_gate(sql: str) -> str:
    return _REAL.sub(r"(\1shadow_of IS NULL AND \1gate_run IS NULL)", sql)


def _triggers(gate_aware: bool) -> None:
    """Replace the rollup's triggers with 0006's, with the gate's rows left out or not."""
    rollup = _rollup()
    fix = _without_gate if gate_aware else (lambda sql: sql)
    if op.get_bind().dialect.name == "postgresql":
        # The triggers call this function: replacing its body is enough.
        op.execute(fix(rollup._POSTGRES_FUNCTION.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)))
        return
    for name, body in rollup._SQLITE_TRIGGERS.items():
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute(f"CREATE TRIGGER {name} {fix(body)}")


def upgrade() -> None:
    with op.batch_alter_table("usage") as batch:
        batch.add_column(sa.Column("gate_run", sa.String(), nullable=True))
    _triggers(gate_aware=True)
    op.create_table(
        "gate_runs",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("target", sa.String(), nullable=False),
        sa.Column("backend", sa.String(), nullable=False),
        sa.Column("route", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("recipe_hash", sa.String(), nullable=False),
        sa.Column("label", sa.String(), nullable=True),
        sa.Column("suites", sa.Text(), nullable=False),
        sa.Column("wall_time_s", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_gate_runs_target_started_at", "gate_runs", ["target", "started_at"])
    op.create_table(
        "gate_results",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("case_id", sa.String(), nullable=False),
        sa.Column("category", sa.String(), nullable=False),
        sa.Column("difficulty", sa.String(), nullable=True),
        sa.Column("evaluator", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("elapsed_s", sa.Float(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "case_id", name="uq_gate_results_run_case"),
    )


def downgrade() -> None:
    op.drop_table("gate_results")
    op.drop_index("ix_gate_runs_target_started_at", table_name="gate_runs")
    op.drop_table("gate_runs")
    if op.get_bind().dialect.name != "postgresql":
        for name in _rollup()._SQLITE_TRIGGERS:  # SQLite's batch copy of the table would lose them
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    with op.batch_alter_table("usage") as batch:
        batch.drop_column("gate_run")
    _triggers(gate_aware=False)
