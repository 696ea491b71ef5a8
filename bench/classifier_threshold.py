"""Route accuracy when the local/cloud threshold on the classifier's probability mass moves.

    .venv/bin/python bench/classifier_threshold.py --dev FILE.jsonl ... --held FILE.jsonl ...

A request goes local when the probability of the local intents (coding, tools, instruction) is
at least ``0.5 - shift``. Each shift is scored on the development files together and on the
held-out files together (predicted routes on the whole request, without the policy's tool-loop
cut). Why: when the errors left lean one way, a shift is the cheapest correction, and this shows
what it costs on the data it was not chosen on.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from classifier.model import LOCAL_INTENTS, IntentModel, route_of  # noqa: E402
from classifier.train import load_jsonl  # noqa: E402

SHIFTS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25)


def local_mass(model: IntentModel, files: list[str]) -> list[tuple[float, str]]:
    """(probability of the local intents, gold route) per request."""
    local = [i for i, c in enumerate(model.classes) if c in LOCAL_INTENTS]
    out = []
    for path in files:
        for e in load_jsonl(path):
            p = model.predict(e.request).probabilities
            out.append((sum(p[i] for i in local), route_of(e.intent)))
    return out


def accuracy(rows: list[tuple[float, str]], shift: float) -> float:
    return sum(("local" if mass >= 0.5 - shift else "cloud") == gold for mass, gold in rows) / len(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dev", nargs="+", required=True)
    ap.add_argument("--held", nargs="+", required=True)
    ap.add_argument("--weights", default=None)
    args = ap.parse_args(argv)
    model = IntentModel.load(args.weights)
    dev, held = local_mass(model, args.dev), local_mass(model, args.held)
    print(f"weights {model.version}; {len(dev)} development and {len(held)} held-out requests")
    for shift in SHIFTS:
        print(
            f"shift {shift:4.2f}  development {accuracy(dev, shift):.3f}  held out {accuracy(held, shift):.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
