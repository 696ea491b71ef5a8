"""smf-bench's stage-1 result files as gate runs: an Official A run already made is evidence
without running it again.

The file: ``tag``, ``model``, ``timestamp`` (``YYYYMMDD_HHMMSS``), ``wall_time_seconds``,
``summary``, ``by_category`` and ``tests``, each test with ``test_id``, ``category``,
``status`` (``pass``, ``fail``, ``error``), ``score``, ``detail``, ``elapsed``,
``tokens_used`` and ``evaluator``. The difficulty is not stored there: it is read from the
case id (``v3.coding.hard.02``) where the id names one.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from router.gate.store import Result, Run
from router.gate.suites import DIFFICULTIES

MAX_FILE_BYTES = 64 * 1024 * 1024


class Stage1Error(ValueError):
    """A file that is not a stage-1 result file; the message says where."""


def read(path: Path, target: str, backend: str, route: str, recipe_hash: str) -> tuple[Run, list[Result]]:
    if not path.is_file():
        raise Stage1Error(f"{path}: no such file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise Stage1Error(f"{path}: larger than {MAX_FILE_BYTES >> 20} MB: not a stage-1 result file")
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError:
        raise Stage1Error(f"{path}: not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("tests"), list) or not data["tests"]:
        raise Stage1Error(f"{path}: no tests[]: not a stage-1 result file")
    results = [_result(test, f"{path}: tests[{n}]") for n, test in enumerate(data["tests"])]
    ids = [r.case_id for r in results]
    if len(set(ids)) != len(ids):
        raise Stage1Error(f"{path}: a test_id appears twice")
    run = Run(
        id=os.urandom(6).hex(),
        started_at=_started(data.get("timestamp"), path),
        source="import",
        target=target,
        backend=backend,
        route=route,
        model=str(data.get("model") or "unknown"),
        recipe_hash=recipe_hash,
        suites=tuple(sorted({str(t.get("suite") or t.get("category")) for t in data["tests"]})),
        label=str(data["tag"]) if data.get("tag") else path.name,
        wall_time_s=_number(data.get("wall_time_seconds")),
    )
    return run, results


def _result(test: Any, where: str) -> Result:
    if not isinstance(test, dict):
        raise Stage1Error(f"{where}: not an object")
    ident, category = test.get("test_id"), test.get("category")
    if not isinstance(ident, str) or not ident or not isinstance(category, str) or not category:
        raise Stage1Error(f"{where}: needs test_id and category")
    status = test.get("status")
    if status is None and isinstance(test.get("passed"), bool):
        status = "pass" if test["passed"] else "fail"
    if status not in ("pass", "fail", "error"):
        raise Stage1Error(f"{where} ({ident}): status must be pass, fail or error, not {status!r}")
    return Result(
        case_id=ident,
        category=category,
        difficulty=test.get("difficulty") or difficulty_of(ident),
        evaluator=str(test.get("evaluator") or "unknown"),
        status=status,
        score=_number(test.get("score")) or (1.0 if status == "pass" else 0.0),
        detail=str(test.get("detail") or "")[:2000],
        elapsed_s=_number(test.get("elapsed")) or 0.0,
        tokens=int(_number(test.get("tokens_used")) or 0),
    )


def difficulty_of(case_id: str) -> str | None:
    """``v3.math.expert.04`` → ``expert``; None when the id names no difficulty."""
    return next((part for part in case_id.split(".") if part in DIFFICULTIES), None)


def _started(stamp: Any, path: Path) -> datetime:
    if isinstance(stamp, str):
        try:
            return datetime.strptime(stamp, "%Y%m%d_%H%M%S").replace(tzinfo=UTC)
        except ValueError:
            pass
    return datetime.fromtimestamp(path.stat().st_mtime, UTC)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
