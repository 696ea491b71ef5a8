"""The corpus generator's random source: one ``random.Random`` passed to every template.

Why: no module-level random state, so a run is a function of its seed alone (``make``-style
reproducible: the same seed writes the same ``train.jsonl``), and parts can be tested alone.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


class Rand(random.Random):
    """``random.Random`` with the two draws the templates use most."""

    def p(self, pool: Sequence[T]) -> T:
        """One item of ``pool``."""
        return self.choice(pool)

    def n(self, lo: int, hi: int) -> int:
        """An integer in ``[lo, hi]``."""
        return self.randint(lo, hi)
