"""``offload eval FILE.jsonl [--weights PATH] [--loso] [--by-source] [--by FIELD]``: accuracy and confusion matrices.

Without ``--loso`` the (packaged or given) weights are scored on FILE: per-intent accuracy,
the 6x6 intent confusion matrix and the 2x2 local/cloud route matrix, and with ``--by-source``
(or ``--by FIELD``: ``format``, ``language``, ``intent``, ``group`` of the hand-written sets) one
accuracy line per value. With ``--policy`` the route is the proxy's: each request goes through
``router.decide.policy.Policy.decide`` with the packaged config (``config/router.yaml``, or the given
one), so a tool-loop turn takes its task's decision and a low-confidence prediction follows
``routing.low_confidence``; the intent shown is the one the decision carries. With ``--loso`` FILE is treated as a training corpus: for
each ``source`` a model is fitted on all other sources and scored on the held-out one (needs
scikit-learn), so template families cannot vouch for themselves.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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


def report(title: str, gold: Sequence[str], pred: Sequence[str], routes: Sequence[str] | None = None) -> str:
    """Accuracy and confusion matrices; ``routes``: the decided routes (default: each predicted
    intent's route)."""
    g_route = [route_of(g) for g in gold]
    p_route = list(routes) if routes is not None else [route_of(p) for p in pred]
    labels = INTENTS + ("?",) if "?" in pred else INTENTS
    return "\n".join(
        [
            f"== {title}: n={len(gold)}  intent accuracy={accuracy(gold, pred):.3f}  "
            f"route accuracy={accuracy(g_route, p_route):.3f}",
            format_matrix(confusion(gold, pred, labels), labels),
            "",
            format_matrix(confusion(g_route, p_route, ROUTES), ROUTES),
        ]
    )


def field_of(example: Example, name: str) -> str:
    """A line's value for ``name``: the gold intent, its source, or one of its other tags."""
    if name == "intent":
        return example.intent
    if name == "source":
        return example.source
    return example.tags.get(name, "?")


def by_field(
    examples: Sequence[Example], pred: Sequence[str], name: str, routes: Sequence[str] | None = None
) -> str:
    """One line per value of ``name``: n, intent and route accuracy, and what was predicted."""
    lines = []
    for value in sorted({field_of(e, name) for e in examples}):
        idx = [i for i, e in enumerate(examples) if field_of(e, name) == value]
        g = [examples[i].intent for i in idx]
        p = [pred[i] for i in idx]
        if routes is None:
            r_acc = route_accuracy(g, p)
        else:
            r_acc = accuracy([route_of(x) for x in g], [routes[i] for i in idx])
        lines.append(
            f"{name} {value:<16} n={len(g):5d}  intent acc={accuracy(g, p):.3f}  route acc={r_acc:.3f}"
            f"  predicted {dict(Counter(p).most_common())}"
        )
    return "\n".join(lines)


def before_after(gold: Sequence[str], before: Sequence[str], after: Sequence[str], old: str, new: str) -> str:
    """Intent and route accuracy of two models on the same labelled file, side by side."""
    fixed = sum(b != g == a for g, b, a in zip(gold, before, after, strict=True))
    broken = sum(b == g != a for g, b, a in zip(gold, before, after, strict=True))
    return "\n".join(
        [
            f"{'':<10}{'before':>10}{'after':>10}   ({old} -> {new}, n={len(gold)})",
            f"{'intent':<10}{accuracy(gold, before):>10.3f}{accuracy(gold, after):>10.3f}",
            f"{'route':<10}{route_accuracy(gold, before):>10.3f}{route_accuracy(gold, after):>10.3f}",
            f"fixed {fixed}, broken {broken}",
        ]
    )


def predict_all(model: IntentModel, examples: Sequence[Example]) -> list[str]:
    return [model.predict(e.request).intent for e in examples]


DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "config" / "router.yaml"


def proxy_policy(model: Any, config: str | Path = DEFAULT_CONFIG) -> Any:
    """The proxy's ``Policy`` with ``config``'s routing, deciding with ``model``."""
    from router.config import load_config
    from router.decide.policy import Policy

    return Policy(load_config(str(config)), model)


def decide_one(policy: Any, request: Any) -> tuple[str, str]:
    """(intent, route) of one stored request as ``policy`` decides it: a chat-shaped view, or a
    ``prompt`` body as a completions request. The intent is the decision's (a tool-loop turn
    carries its task's), or ``?`` when none."""
    import orjson

    from router.dialects import CHAT, COMPLETIONS

    body = request if isinstance(request, dict) else {"messages": request}
    dialect = COMPLETIONS if "messages" not in body and "prompt" in body else CHAT
    decision = policy.decide(body, None, len(orjson.dumps(body)), dialect)
    return decision.intent or "?", decision.route


def policy_decide_all(
    model: IntentModel, examples: Sequence[Example], config: str | Path = DEFAULT_CONFIG
) -> list[tuple[str, str]]:
    """(intent, route) of each request as the proxy decides it (:func:`decide_one`, with
    ``Policy.decide`` and the config's routing)."""
    policy = proxy_policy(model, config)
    return [decide_one(policy, e.request) for e in examples]


def routed_correctly(model: IntentModel, examples: Sequence[Example]) -> int:
    """How many of ``examples`` the proxy (:func:`policy_decide_all`) routes to their gold
    intent's route."""
    decided = policy_decide_all(model, examples)
    return sum(route_of(e.intent) == route for e, (_, route) in zip(examples, decided, strict=True))


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


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="offload eval", description="Evaluate the intent classifier.")
    ap.add_argument("file", help="labelled JSONL")
    ap.add_argument("--weights", default=None, help="JSON weights (default: packaged)")
    ap.add_argument(
        "--compare",
        metavar="BASELINE",
        help="also score these weights ('packaged' for the shipped ones) and print before and after",
    )
    ap.add_argument(
        "--loso", action="store_true", help="leave-one-source-out over FILE (trains; needs scikit-learn)"
    )
    ap.add_argument(
        "--policy",
        nargs="?",
        const=str(DEFAULT_CONFIG),
        default=None,
        metavar="CONFIG",
        help="route as the proxy decides: Policy.decide with CONFIG (default: config/router.yaml)",
    )
    ap.add_argument("--C", type=float, default=DEFAULT_C)
    ap.add_argument("--min-df", type=int, default=DEFAULT_MIN_DF)
    ap.add_argument("--errors", type=int, default=0, help="print up to N misclassified ids")
    ap.add_argument("--by-source", action="store_true", help="also print accuracy per source")
    ap.add_argument(
        "--by",
        action="append",
        default=[],
        metavar="FIELD",
        help="also print accuracy per value of a line's FIELD (format, language, intent, group; repeatable)",
    )
    return ap


def _print_loso(examples: Sequence[Example], c: float, min_df: int) -> None:
    all_gold: list[str] = []
    all_pred: list[str] = []
    for source, gold, pred in leave_one_source_out(examples, c, min_df):
        r_acc = route_accuracy(gold, pred)
        print(
            f"held-out source {source:<14} n={len(gold):5d}  intent acc={accuracy(gold, pred):.3f}  route acc={r_acc:.3f}"
        )
        all_gold += gold
        all_pred += pred
    print(report("leave-one-source-out (pooled)", all_gold, all_pred))


def _print_errors(examples: Sequence[Example], pred: list[str], routes: list[str] | None, limit: int) -> None:
    """Up to ``limit`` misclassified ids, each saying whether the route was wrong too."""
    decided_routes = routes if routes is not None else [route_of(p) for p in pred]
    wrong = [
        (e.id, e.intent, p, r)
        for e, p, r in zip(examples, pred, decided_routes, strict=True)
        if e.intent != p or route_of(e.intent) != r
    ]
    for ex_id, g, p, r in wrong[:limit]:
        print(
            f"  {ex_id}: gold={g} pred={p} route={r} ({'ROUTE ERROR' if route_of(g) != r else 'same route'})"
        )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    examples = load_jsonl(args.file)
    if args.loso:
        _print_loso(examples, args.C, args.min_df)
        return 0
    model = IntentModel.load(args.weights)
    routes: list[str] | None = None  # the proxy's routes with --policy, else each intent's route
    if args.policy:
        decided = policy_decide_all(model, examples, args.policy)
        pred, routes = [intent for intent, _ in decided], [route for _, route in decided]
    else:
        pred = predict_all(model, examples)
    gold = [e.intent for e in examples]
    if args.compare:
        baseline = IntentModel.load(None if args.compare == "packaged" else args.compare)
        print(before_after(gold, predict_all(baseline, examples), pred, baseline.version, model.version))
        print()
    print(f"weights {model.version}; sources {dict(Counter(e.source for e in examples))}")
    print(report(args.file, gold, pred, routes))
    for by in (["source"] if args.by_source else []) + args.by:
        print()
        print(by_field(examples, pred, by, routes))
    if args.errors:
        _print_errors(examples, pred, routes, args.errors)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
