"""Rows of pasted data in a user's text: a table, a CSV export, a log.

A one-line ask beside a bill, an experiment's export or last night's log is still the ask:
the rows are payload (``ask.split_payload``), whether the ask sits before them, after them or
around them. A row is a line that starts with a date or a time (a log), or one of a run of
lines with the same count of separators (commas, tabs, pipes). Plain ``str`` methods and one
anchored regex per line: no per-character Python loops.
"""

from __future__ import annotations

import re

# A line that starts with a date or a time; the shape of any log line (its separators vary).
_STAMPED = re.compile(r"\s*\[?\d{2,4}[-/:.]\d{1,2}")
MIN_DATA_ROWS = 3
_LOG_LINE = (-1, -1, -1)


def _row_shape(line: str) -> tuple[int, int, int] | None:
    """A line's separator counts when it can be a row of pasted data, else None."""
    if len(line) > 400:
        return None
    if _STAMPED.match(line):
        return _LOG_LINE  # a log line: whatever its separators
    shape = (line.count(","), line.count("\t"), line.count("|"))
    return shape if shape[0] >= 2 or shape[1] >= 1 or shape[2] >= 2 else None


def _data_rows(lines: list[str]) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of at least MIN_DATA_ROWS rows of pasted data."""
    runs: list[tuple[int, int]] = []
    start, shape = 0, None
    for i, line in enumerate(lines):
        row = _row_shape(line)
        if row is not None and row == shape:
            continue
        if shape is not None and i - start >= MIN_DATA_ROWS:
            runs.append((start, i))
        start, shape = i, row
    if shape is not None and len(lines) - start >= MIN_DATA_ROWS:
        runs.append((start, len(lines)))
    return runs


def is_data(block: str) -> bool:
    """Whether a block of text is rows of pasted data: at least MIN_DATA_ROWS lines, four in
    five of them in runs of rows (a table, a CSV export, a log)."""
    lines = block.strip().split("\n")
    if len(lines) < MIN_DATA_ROWS:
        return False
    in_rows = sum(end - start for start, end in _data_rows(lines))
    return 5 * in_rows >= 4 * len(lines)


def around_data(paragraphs: list[str], limit: int) -> tuple[str, str] | None:
    """``(ask, payload)`` of paragraphs some of which are rows of pasted data (f19): the others
    are the ask when they fit in ``limit`` characters ("<CSV export>\\n\\n<a long question about it>"),
    wherever they sit; None when there are no data paragraphs or no others."""
    data = [p for p in paragraphs if is_data(p)]
    if not data or len(data) == len(paragraphs):
        return None
    prose = [p.strip() for p in paragraphs if not is_data(p)]
    if sum(map(len, prose)) > limit:
        return None
    return "\n".join(prose), "\n\n".join(data)


def without_rows(ask: str, payload: str) -> tuple[str, str]:
    """Rows of pasted data left in an ask ("<CSV export>\nShould we buy the savings plan?")
    move to the payload; the lines around them stay the ask (unless nothing else is left)."""
    if ask.count("\n") < MIN_DATA_ROWS:
        return ask, payload
    lines = ask.split("\n")
    runs = _data_rows(lines)
    if not runs:
        return ask, payload
    in_rows = {i for start, end in runs for i in range(start, end)}
    around = "\n".join(line for i, line in enumerate(lines) if i not in in_rows).strip()
    if not around:
        return ask, payload
    rows = "\n".join(lines[i] for i in sorted(in_rows))
    return around, rows + "\n" + payload if payload else rows
