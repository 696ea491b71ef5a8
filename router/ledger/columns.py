"""The column values of a usage row, made storable on SQLite and PostgreSQL alike.

The client chooses ``model`` (and, with ``database.store_text``, the text), so a value must
never be what stops its row (docs/operations.md, "Limits an operator must set").
"""

from __future__ import annotations

import dataclasses
import math
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Float, Integer, String, Text

from router.ledger.models import UsageRow, usage_table

# Every UsageRow field is a column of ``usage`` (router.ledger.models builds the table from them).
COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(UsageRow))
_TEXT = ("prompt_text", "completion_text")


def _utc(value: datetime) -> datetime:
    # A naive timestamp from the proxy is UTC by contract.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def row_values(row: UsageRow | dict[str, Any], store_text: bool) -> dict[str, Any]:
    """The column values of one row (a UsageRow, or a dict read back from the spool or
    the journal), made storable."""
    if isinstance(row, UsageRow):
        values = {name: getattr(row, name) for name in COLUMNS}
    else:
        values = {name: row.get(name) for name in COLUMNS}
        if isinstance(values["started_at"], str):
            values["started_at"] = datetime.fromisoformat(values["started_at"])
    values["started_at"] = _utc(values["started_at"])
    if not store_text:
        for name in _TEXT:
            values[name] = None
    _make_storable(values)
    return values


SHORT_TEXT_MAX = 512  # characters kept of a String column: model names, reasons, ids
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1  # INTEGER is 32-bit on PostgreSQL
_SHORT = tuple(n for n in COLUMNS if type(usage_table.c[n].type) is String)
_LONG = tuple(n for n in COLUMNS if isinstance(usage_table.c[n].type, Text))
_INTS = tuple(n for n in COLUMNS if isinstance(usage_table.c[n].type, Integer))
_FLOATS = {n: usage_table.c[n].nullable for n in COLUMNS if isinstance(usage_table.c[n].type, Float)}


def storable_text(value: str, limit: int | None = None) -> str:
    """``value`` as both databases can store it, at most ``limit`` characters.

    PostgreSQL refuses NUL (``\\u0000``) in text, and neither driver can encode a
    lone surrogate (``\\ud800``) as UTF-8: NULs are dropped, lone surrogates
    become ``?``. Cheap for the usual ASCII value: two scans.
    """
    if "\x00" in value:
        value = value.replace("\x00", "")
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError:
            value = value.encode("utf-8", "replace").decode()
    return value if limit is None or len(value) <= limit else value[:limit]


def _make_storable(values: dict[str, Any]) -> None:
    """Text cleaned and short strings bounded; integers clamped to 32 bits; non-finite
    floats (SQLite stores NaN as NULL) made NULL, or 0 where the column needs a value."""
    for name in _SHORT:
        value = values[name]
        if isinstance(value, str):
            values[name] = storable_text(value, SHORT_TEXT_MAX)
    for name in _LONG:
        value = values[name]
        if isinstance(value, str):
            values[name] = storable_text(value)
    for name in _INTS:
        value = values[name]
        if type(value) is int and not _INT_MIN <= value <= _INT_MAX:
            values[name] = min(max(value, _INT_MIN), _INT_MAX)
    for name, nullable in _FLOATS.items():
        value = values[name]
        if isinstance(value, float) and not math.isfinite(value):
            values[name] = None if nullable else 0.0
