"""Bar charts as SVG geometry, computed on the server: no script, nothing fetched.

A chart is numbers only (coordinates and labels); ``templates/_chart.html`` draws
it, escaped like every other value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

WIDTH, HEIGHT = 1100, 200
LEFT, RIGHT, TOP, BOTTOM = 44, 8, 10, 22  # margins for the axis labels


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    title: str  # shown on hover: the day and the value


@dataclass(frozen=True, slots=True)
class Tick:
    at: float  # x or y in the SVG's coordinates
    label: str


@dataclass(frozen=True, slots=True)
class Chart:
    title: str
    bars: list[Bar]
    y_ticks: list[Tick]
    x_ticks: list[Tick]
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    baseline: int = HEIGHT - BOTTOM


def bar_chart(
    title: str,
    labels: Sequence[str],
    values: Sequence[float | None],
    *,
    top: float | None = None,
    fmt: Callable[[float], str] = lambda v: f"{v:,.0f}",
    whole: bool = False,
) -> Chart:
    """One bar per value (None: no bar, a gap), scaled to ``top`` (default: a round number
    at or above the largest value); every few labels shown under the axis. ``whole``:
    counts, so no tick between two whole numbers."""
    peak = max((v for v in values if v is not None), default=0.0)
    top = top if top is not None else _round_up(peak)
    plot_h = HEIGHT - TOP - BOTTOM
    slot = (WIDTH - LEFT - RIGHT) / max(len(values), 1)
    bars = []
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        if value is None:
            continue
        h = plot_h * min(value / top, 1.0) if top else 0.0
        bars.append(
            Bar(LEFT + i * slot + slot * 0.15, HEIGHT - BOTTOM - h, slot * 0.7, h, f"{label}: {fmt(value)}")
        )
    fractions = [f for f in (0.0, 0.5, 1.0) if not whole or (top * f).is_integer()]
    y_ticks = [Tick(HEIGHT - BOTTOM - plot_h * f, fmt(top * f)) for f in fractions]
    every = max(1, math.ceil(len(labels) / 10))
    x_ticks = [Tick(LEFT + (i + 0.5) * slot, label) for i, label in enumerate(labels) if i % every == 0]
    return Chart(title, bars, y_ticks, x_ticks)


def _round_up(value: float) -> float:
    """1, 2 or 5 times a power of ten, at or above ``value`` (at least 1)."""
    if value <= 1:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= value)
