"""Does training on the hand-written requests route *unseen* hand-written traffic better?

    .venv/bin/python bench/classifier_handwritten.py
    .venv/bin/python bench/classifier_handwritten.py --other-weight 1     # the trade-off of one weight
    .venv/bin/python bench/classifier_handwritten.py --external /tmp/public.jsonl  # + public sets

The packaged weights are trained on the generated corpus plus every hand-written request in
``classifier/data/handwritten/`` (``classifier.train.packaged_recipe``). Each set there was
written by a separate hand that never saw the others, so leaving one out of training and scoring
it says how the recipe does on traffic written by someone it never learnt from. For each set
(``--sets NAME ...`` for some of them; ``--agents`` for the agent-shaped ones: ``agents_*`` and
``roles_*``) this prints route accuracy as the proxy decides (``Policy.decide`` with the
packaged config) of

* ``corpus``: trained on the generated corpus alone (the baseline, fitted in the same run);
  (``--no-corpus`` skips it: one fit less, the column reads 0);
* ``recipe``: trained on the corpus and every *other* hand-written file, at the recipe's weights
  (or ``--english-weight`` / ``--other-weight`` for the files in other languages).

Then the sets never trained on (``classifier/data/sealed/``, and ``--external`` public prompt
sets from ``python -m classifier.external --out FILE``) scored by both models trained on
everything. One fit per set and two more: a few minutes on an idle 2-core machine (a fit takes
5-10 s there), much longer on a busy one.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from classifier_second_stage import SecondStage

from classifier.evaluate import routed_correctly
from classifier.model import IntentModel
from classifier.train import (
    DEFAULT_C,
    DEFAULT_DATA,
    DEFAULT_MIN_DF,
    SEALED_DIR,
    Example,
    fit_model,
    handwritten_files,
    load_jsonl,
)


def fit(parts: Sequence[tuple[list[Example], float]]) -> IntentModel:
    examples = [e for part, _ in parts for e in part]
    weights = [w for part, w in parts for _ in part]
    return fit_model(examples, DEFAULT_C, DEFAULT_MIN_DF, sample_weight=weights)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--english-weight", type=float, help="weight of an English hand-written request")
    ap.add_argument("--other-weight", type=float, help="weight of a request in the files in other languages")
    ap.add_argument("--external", type=Path, help="public prompt sets (classifier.external --out)")
    ap.add_argument("--sets", nargs="+", metavar="NAME", help="leave out only these sets (file stems)")
    ap.add_argument("--agents", action="store_true", help="leave out only the agent-shaped sets")
    ap.add_argument("--no-sealed", action="store_true", help="do not score the sealed sets")
    ap.add_argument("--no-corpus", action="store_true", help="skip the corpus-alone baseline (one fit less)")
    ap.add_argument(
        "--second-stage",
        action="store_true",
        help="also score a nearest-neighbour second stage for uncertain requests (bench/classifier_second_stage.py)",
    )
    args = ap.parse_args(argv)
    corpus = load_jsonl(DEFAULT_DATA)
    files: dict[str, tuple[list[Example], float]] = {}
    weights: dict[str, float] = {}
    if args.english_weight is not None:
        weights["english"] = args.english_weight
    if args.other_weight is not None:
        weights["multilingual"] = args.other_weight
    for path, weight in handwritten_files(**weights):
        files[path.stem] = (load_jsonl(path), weight)
    listed = ", ".join(f"{name} x{w:g}" for name, (_, w) in files.items())
    print(f"hand-written training files: {listed}")

    baseline = None if args.no_corpus else fit([(corpus, 1.0)])

    def score(model: IntentModel | None, examples: list[Example]) -> int:
        return routed_correctly(model, examples) if model is not None else 0

    held_out = [
        name
        for name in files
        if (not args.sets or name in args.sets)
        and (not args.agents or name.startswith(("agents_", "roles_")))
    ]
    print(f"\n{'left out':<22} {'n':>4} {'corpus':>8} {'recipe':>8}   (route accuracy, never trained on it)")
    totals = [0, 0, 0]
    second = SecondStage(files) if args.second_stage else None
    for name in held_out:
        rest = [part for other, part in files.items() if other != name]
        examples = files[name][0]
        model = fit([(corpus, 1.0), *rest])
        before, after = score(baseline, examples), routed_correctly(model, examples)
        totals = [totals[0] + len(examples), totals[1] + before, totals[2] + after]
        more = f"   second stage {second.fold(name, model)}" if second is not None else ""
        print(
            f"{name:<22} {len(examples):4d} {before / len(examples):8.3f} {after / len(examples):8.3f}{more}",
            flush=True,
        )
    n, before, after = totals
    print(f"{'pooled':<22} {n:4d} {before / n:8.3f} {after / n:8.3f}   ({before} and {after} of {n})")
    if second is not None:
        print(second.summary())

    if args.no_sealed:
        return 0
    recipe = fit([(corpus, 1.0), *files.values()])
    never = {p.stem: load_jsonl(p) for p in sorted(SEALED_DIR.glob("*.jsonl"))}
    if args.external:
        public = load_jsonl(args.external)
        for source in sorted({e.source for e in public}):
            never[f"public {source}"] = [e for e in public if e.source == source]
    print(f"\n{'never trained on':<22} {'n':>4} {'corpus':>8} {'recipe':>8}   (both trained on everything)")
    for name, examples in never.items():
        a, b = score(baseline, examples), routed_correctly(recipe, examples)
        print(
            f"{name:<22} {len(examples):4d} {a / len(examples):8.3f} {b / len(examples):8.3f}   ({a} and {b})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
