"""Would the public prompt sets help as extra *training* data? (Measured: no; bench/README.md.)

    .venv/bin/python bench/classifier_external_training.py --sets humaneval,bfcl_live,bfcl_multi_turn
    .venv/bin/python bench/classifier_external_training.py --weight 0.25          # every set, down-weighted

Trains on ``classifier/data/train.jsonl`` plus at most ``--cap`` rows of each chosen public set
(``classifier.external``; needs ``make evaldata``), with the packaged weights' hyper-parameters,
and prints route accuracy of:

* each chosen set, left out of training in turn (leave-one-set-out), on all of its rows;
* the sealed hand-written sets (``classifier/data/sealed/``), for the model trained on everything;
* the generated corpus, leave-one-source-out with the public rows always in training.

Sets not chosen are scored by the model trained on everything (never seen in training).
About 1 to 4 minutes on 2 cores, depending on the sets.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from classifier.evaluate import predict_all, route_accuracy
from classifier.external import SETS, labelled_rows
from classifier.model import IntentModel
from classifier.train import (
    DEFAULT_C,
    DEFAULT_DATA,
    DEFAULT_MIN_DF,
    SEALED_DIR,
    Example,
    fit_model,
    load_jsonl,
)


def public_rows(per_set: int) -> list[Example]:
    """Every set's seeded sample (``per_set`` 0: every row), as training examples."""
    rows = [r for name in SETS for r in labelled_rows(SETS[name], per_set, seed=7)[0]]
    return [Example(r["request"], r["intent"], r["source"], r["id"]) for r in rows]


def score(model: IntentModel, examples: Sequence[Example]) -> float:
    """Route accuracy of ``model`` on ``examples``; NaN (printed "nan") for a set with no rows."""
    if not examples:
        return float("nan")
    return route_accuracy([e.intent for e in examples], predict_all(model, examples))


def train(corpus: Sequence[Example], public: Sequence[Example], weight: float) -> IntentModel:
    weights = [1.0] * len(corpus) + [weight] * len(public)
    return fit_model([*corpus, *public], DEFAULT_C, DEFAULT_MIN_DF, sample_weight=weights)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SETS), help="public sets to train on (comma list)")
    ap.add_argument("--cap", type=int, default=300, help="training rows per public set (seeded sample)")
    ap.add_argument("--weight", type=float, default=1.0, help="sample weight of a public row")
    args = ap.parse_args(argv)
    chosen = args.sets.split(",")
    corpus = load_jsonl(DEFAULT_DATA)
    sealed = [e for p in sorted(SEALED_DIR.glob("*.jsonl")) for e in load_jsonl(p)]
    every = public_rows(0)  # for scoring
    capped = [e for e in public_rows(args.cap) if e.source in chosen]
    packaged = IntentModel.load()
    everything = train(corpus, capped, args.weight)
    print(f"{'set':<18} {'packaged':>9} {'trained':>9}   (route accuracy on all rows of the set)")
    for name in SETS:
        rows = [e for e in every if e.source == name]
        model = (
            train(corpus, [e for e in capped if e.source != name], args.weight)
            if name in chosen
            else everything
        )
        note = "" if name in chosen else "   never trained on"
        print(f"{name:<18} {score(packaged, rows):9.3f} {score(model, rows):9.3f}{note}")
    print(f"sealed sets: packaged {score(packaged, sealed):.3f}, trained on everything "
          f"{score(everything, sealed):.3f}")  # fmt: skip
    hits = 0.0
    for source in sorted({e.source for e in corpus}):
        held = [e for e in corpus if e.source == source]
        model = train([e for e in corpus if e.source != source], capped, args.weight)
        hits += score(model, held) * len(held)
    print(f"corpus leave-one-source-out with the public rows in training: {hits / len(corpus):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
