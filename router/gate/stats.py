"""Tallies of graded cases, with a Wilson interval per rate.

A rate is passes over every case that was asked: an error (no answer, a timeout) is not a
pass, and it is counted apart so that a run full of errors never reads as a weak model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from router.gate.suites import DIFFICULTIES

Z95 = 1.959963984540054


class Graded(Protocol):
    @property
    def category(self) -> str: ...
    @property
    def difficulty(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def detail(self) -> str: ...


@dataclass(frozen=True)
class Tally:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    timeouts: int = 0  # of the errors

    @property
    def cases(self) -> int:
        return self.passed + self.failed + self.errors

    @property
    def rate(self) -> float | None:
        return self.passed / self.cases if self.cases else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.passed, self.cases)

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            self.passed + other.passed,
            self.failed + other.failed,
            self.errors + other.errors,
            self.timeouts + other.timeouts,
        )


def wilson(passed: int, cases: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of ``passed`` out of ``cases`` (95 % by default)."""
    if cases <= 0:
        return None
    p = passed / cases
    denominator = 1 + z * z / cases
    centre = (p + z * z / (2 * cases)) / denominator
    half = z * math.sqrt(p * (1 - p) / cases + z * z / (4 * cases * cases)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def tally(results: Iterable[Graded]) -> Tally:
    out = Tally()
    for r in results:
        timeout = r.status == "error" and r.detail.startswith("timed out")
        out += Tally(r.status == "pass", r.status == "fail", r.status == "error", timeout)
    return out


def by(results: Iterable[Graded], key: Callable[[Graded], str | None]) -> dict[str, Tally]:
    """Tallies grouped by ``key`` (cases whose key is None are left out)."""
    groups: dict[str, list[Graded]] = {}
    for r in results:
        k = key(r)
        if k is not None:
            groups.setdefault(k, []).append(r)
    return {k: tally(v) for k, v in groups.items()}


def difficulty_order(names: Iterable[str]) -> list[str]:
    """smf-bench's ladder first (easy → frontier), any other label after, by name."""
    known = [d for d in DIFFICULTIES if d in names]
    return known + sorted(set(names) - set(DIFFICULTIES))


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def span(interval: tuple[float, float] | None) -> str:
    return "" if interval is None else f"[{interval[0]:.0%}-{interval[1]:.0%}]"
