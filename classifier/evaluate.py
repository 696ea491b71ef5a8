"""``offload eval FILE.jsonl [--weights PATH] [--loso] [--by-source]``: accuracy and confusion matrices.

Without ``--loso`` the (packaged or given) weights are scored on FILE: per-intent accuracy,
the 6x6 intent confusion matrix and the 2x2 local/cloud route matrix, and with ``--by-source``
one accuracy line per ``source``. With ``--loso`` FILE is treated as a training corpus: for
each ``source`` a model is fitted on all other sources and scored on the held-out one (needs
scikit-learn), so template families cannot vouch for themselves.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence

from classifier.model import INTENTS, IntentModel, route_of
from classifier.train import DEFAULT_C, DEFAULT_MIN_DF, Example, fit_model, load_jsonl

ROUTES = ("local", "cloud")


def confusion(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> list[list[int]]:
    idx = {lab: i for i, lab in enumerate(labels)}
    m = [[0] * len(labels) for _ in labels]
    for g, p in zip(gold, pred, strict=True):
        m[idx[g]][idx[p]] += 1
    return m


def accuracy(gold: Sequence[str], pred: Sequence[str]) -> float:
    return sum(g == p for g, p in zip(gold, pred, strict=True)) / max(1, len(gold))


def route_accuracy(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Share of predicted intents whose route is the gold intent's route (0 when empty)."""
    return accuracy([route_of(g) for g in gold], [route_of(p) for p in pred])


def format_matrix(m: list[list[int]], labels: Sequence[str]) -> str:
    w = max(11, *(len(lab) + 1 for lab in labels))
    lines = ["gold \\ pred".ljust(w) + "".join(lab[:10].rjust(w) for lab in labels) + "   recall"]
    for lab, row in zip(labels, m, strict=True):
        total = sum(row)
        rec = row[labels.index(lab)] / total if total else float("nan")
        lines.append(lab.ljust(w) + "".join(str(v).rjust(w) for v in row) + f"   {rec:6.3f}  (n={total})")
    return "\n".join(lines)


def report(title: str, gold: Sequence[str], pred: Sequence[str]) -> str:
    g_route = [route_of(g) for g in gold]
    p_route = [route_of(p) for p in pred]
    return "\n".join(
        [
            f"== {title}: n={len(gold)}  intent accuracy={accuracy(gold, pred):.3f}  "
            f"route accuracy={accuracy(g_route, p_route):.3f}",
            format_matrix(confusion(gold, pred, INTENTS), INTENTS),
            "",
            format_matrix(confusion(g_route, p_route, ROUTES), ROUTES),
        ]
    )


def predict_all(model: IntentModel, examples: Sequence[Example]) -> list[str]:
    return [model.predict(e.request).intent for e in examples]


def leave_one_source_out(
    examples: Sequence[Example], c: float, min_df: int
) -> list[tuple[str, list[str], list[str]]]:
    """Per source: (source, gold, predictions of a model trained without that source)."""
    out = []
    for source in sorted({e.source for e in examples}):
        train = [e for e in examples if e.source != source]
        test = [e for e in examples if e.source == source]
        model = fit_model(train, c, min_df)
        out.append((source, [e.intent for e in test], predict_all(model, test)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="offload eval", description="Evaluate the intent classifier.")
    ap.add_argument("file", help="labelled JSONL")
    ap.add_argument("--weights", default=None, help="JSON weights (default: packaged)")
    ap.add_argument(
        "--loso", action="store_true", help="leave-one-source-out over FILE (trains; needs scikit-learn)"
    )
    ap.add_argument("--C", type=float, default=DEFAULT_C)
    ap.add_argument("--min-df", type=int, default=DEFAULT_MIN_DF)
    ap.add_argument("--errors", type=int, default=0, help="print up to N misclassified ids")
    ap.add_argument("--by-source", action="store_true", help="also print accuracy per source")
    args = ap.parse_args(argv)
    examples = load_jsonl(args.file)
    if args.loso:
        all_gold: list[str] = []
        all_pred: list[str] = []
        for source, gold, pred in leave_one_source_out(examples, args.C, args.min_df):
            r_acc = route_accuracy(gold, pred)
            print(
                f"held-out source {source:<14} n={len(gold):5d}  intent acc={accuracy(gold, pred):.3f}  route acc={r_acc:.3f}"
            )
            all_gold += gold
            all_pred += pred
        print(report("leave-one-source-out (pooled)", all_gold, all_pred))
        return 0
    model = IntentModel.load(args.weights)
    pred = predict_all(model, examples)
    gold = [e.intent for e in examples]
    print(f"weights {model.version}; sources {dict(Counter(e.source for e in examples))}")
    print(report(args.file, gold, pred))
    if args.by_source:
        print()
        for source in sorted({e.source for e in examples}):
            idx = [i for i, e in enumerate(examples) if e.source == source]
            g = [gold[i] for i in idx]
            p = [pred[i] for i in idx]
            r_acc = route_accuracy(g, p)
            print(
                f"source {source:<16} n={len(g):5d}  intent acc={accuracy(g, p):.3f}  route acc={r_acc:.3f}"
                f"  predicted {dict(Counter(p).most_common())}"
            )
    if args.errors:
        wrong = [(e.id, e.intent, p) for e, p in zip(examples, pred, strict=True) if e.intent != p]
        for ex_id, g, p in wrong[: args.errors]:
            print(
                f"  {ex_id}: gold={g} pred={p} ({'ROUTE ERROR' if route_of(g) != route_of(p) else 'same route'})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
