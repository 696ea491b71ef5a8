"""The low-confidence policy as a measured choice: offload share against misroutes.

    .venv/bin/python bench/classifier_confidence.py [--weights PATH] [FILE.jsonl ...]
    .venv/bin/python bench/classifier_confidence.py --held-out roles_en_v1 agents_langs_v1

Why: with ``routing.confidence_floor`` the proxy sends a prediction whose top probability is
below the floor to ``routing.default`` (the local box). Uncertain maths, reasoning and writing
then get the weak model even when the top intent was right. This script scores, on labelled
requests (by default the sealed hand-written sets), what each policy for low-confidence
predictions does to the share of requests served locally and to the misroutes of each kind:

- ``top``: no floor, always the top intent's route;
- ``route mass``: no floor, the route whose intents hold more probability in total;
- ``default`` (floor f): below f, the local default (today's behaviour);
- ``margin`` (floor f, margin m): below f, the top intent's route if its probability leads the
  second's by at least m, else the local default;
- ``class`` (floor f): below f, the route whose intents hold more probability in total (an
  uncertain call between maths and reasoning still goes to the cloud);
- ``cloud`` (floor f): below f, the cloud.

With ``--held-out SET ...`` the requests are hand-written training sets, each scored by a model
fitted on the packaged recipe without it (needs scikit-learn; one fit per set): new traffic for
that model, without touching the sealed sets. The probabilities are always those of the request
the policy classifies (a tool-loop turn's task: ``classifier.data.generate.decision_view``).

A misroute is a request whose route differs from its gold intent's route; ``cloud->local`` are
cloud work served by the local box (the quality risk), ``local->cloud`` local work paid for in
the cloud (the cost).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from classifier.data.generate import decision_view
from classifier.model import INTENTS, IntentModel, route_of
from classifier.train import (
    DEFAULT_C,
    DEFAULT_DATA,
    DEFAULT_MIN_DF,
    HANDWRITTEN_DIR,
    SEALED_DIR,
    Example,
    fit_model,
    handwritten_files,
    load_jsonl,
)

FLOORS = (0.4, 0.5, 0.6)
MARGINS = (0.05, 0.1, 0.2)
LEAN_SHARES = (0.4, 0.45)

Proba = dict[str, float]
Policy = Callable[[Proba], str]


def top_route(p: Proba) -> str:
    return route_of(max(p, key=p.__getitem__))


def default_policy(floor: float) -> Policy:
    return lambda p: top_route(p) if max(p.values()) >= floor else "local"


def cloud_policy(floor: float) -> Policy:
    return lambda p: top_route(p) if max(p.values()) >= floor else "cloud"


def margin_policy(floor: float, margin: float) -> Policy:
    def decide(p: Proba) -> str:
        first, second = sorted(p.values(), reverse=True)[:2]
        if first >= floor or first - second >= margin:
            return top_route(p)
        return "local"

    return decide


def class_policy(floor: float) -> Policy:
    def decide(p: Proba) -> str:
        if max(p.values()) >= floor:
            return top_route(p)
        return mass_route(p)

    return decide


def lean_policy(floor: float, share: float) -> Policy:
    """Below the floor, the cloud when the cloud intents hold at least ``share`` of the
    probability (a cloud request answered by the local box costs its quality; a local one
    served by the cloud, money)."""

    def decide(p: Proba) -> str:
        if max(p.values()) >= floor:
            return top_route(p)
        return "cloud" if sum(v for k, v in p.items() if route_of(k) == "cloud") >= share else "local"

    return decide


def cloud_top_policy(floor: float) -> Policy:
    """Below the floor, the cloud when the top intent is cloud work, else the route holding
    more probability (an uncertain guess at maths stays cloud work even when coding and tools
    together hold more)."""

    def decide(p: Proba) -> str:
        if max(p.values()) >= floor or top_route(p) == "cloud":
            return top_route(p)
        return mass_route(p)

    return decide


def mass_route(p: Proba) -> str:
    """The route whose intents hold more probability in total."""
    return "cloud" if sum(v for k, v in p.items() if route_of(k) == "cloud") > 0.5 else "local"


def policies() -> list[tuple[str, Policy]]:
    out: list[tuple[str, Policy]] = [("top (no floor)", top_route), ("route mass (no floor)", mass_route)]
    for f in FLOORS:
        out.append((f"default, floor {f}", default_policy(f)))
        out += [(f"margin {m}, floor {f}", margin_policy(f, m)) for m in MARGINS]
        out.append((f"class, floor {f}", class_policy(f)))
        out += [(f"lean {share}, floor {f}", lean_policy(f, share)) for share in LEAN_SHARES]
        out.append((f"cloud top, floor {f}", cloud_top_policy(f)))
        out.append((f"cloud, floor {f}", cloud_policy(f)))
    return out


def score(policy: Policy, probas: Sequence[Proba], gold: Sequence[str]) -> tuple[float, float, int, int, int]:
    """Offload share, misroute rate, cloud->local and local->cloud misroutes, and how many
    predictions fell below the floor (counted by the caller)."""
    routes = [policy(p) for p in probas]
    local = sum(r == "local" for r in routes)
    c2l = sum(r == "local" and route_of(g) == "cloud" for r, g in zip(routes, gold, strict=True))
    l2c = sum(r == "cloud" and route_of(g) == "local" for r, g in zip(routes, gold, strict=True))
    n = len(gold)
    return local / n, (c2l + l2c) / n, c2l, l2c, n


def probabilities(model: IntentModel, examples: Sequence[Example]) -> list[Proba]:
    """Each class's probability for the request the policy classifies."""
    assert set(model.classes) == set(INTENTS)
    out = []
    for e in examples:
        request = decision_view(e.request) if isinstance(e.request, dict) else e.request
        out.append(dict(zip(model.classes, model.predict_proba(request), strict=True)))
    return out


def held_out(names: Sequence[str]) -> tuple[list[Example], list[Proba]]:
    """The hand-written sets ``names``, each scored by the recipe fitted without it."""
    corpus = load_jsonl(DEFAULT_DATA)
    files = {path.stem: (load_jsonl(path), weight) for path, weight in handwritten_files()}
    examples: list[Example] = []
    probas: list[Proba] = []
    for name in names:
        if name not in files:
            raise SystemExit(f"no hand-written set {name!r} in {HANDWRITTEN_DIR}")
        train = list(corpus)
        weights = [1.0] * len(corpus)
        for other, (part, weight) in files.items():
            if other != name:
                train += part
                weights += [weight] * len(part)
        model = fit_model(train, DEFAULT_C, DEFAULT_MIN_DF, sample_weight=weights)
        examples += files[name][0]
        probas += probabilities(model, files[name][0])
    return examples, probas


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="labelled JSONL (default: the sealed sets)")
    ap.add_argument("--weights", default=None)
    ap.add_argument(
        "--held-out", nargs="+", metavar="SET", help="hand-written sets, each scored by the recipe without it"
    )
    args = ap.parse_args(argv)
    if args.held_out:
        examples, probas = held_out(args.held_out)
        print(f"held-out recipe fits; {', '.join(args.held_out)}")
    else:
        files = args.files or sorted(str(p) for p in SEALED_DIR.glob("*.jsonl"))
        model = IntentModel.load(args.weights)
        examples = [e for f in files for e in load_jsonl(f)]
        probas = probabilities(model, examples)
        print(f"weights {model.version}; {len(files)} files")
    gold = [e.intent for e in examples]
    gold_local = sum(route_of(g) == "local" for g in gold) / len(gold)
    print(f"{len(gold)} requests; gold local share {gold_local:.3f}")
    for f in FLOORS:
        below = sum(max(p.values()) < f for p in probas)
        print(f"  below floor {f}: {below} ({below / len(gold):.1%})")
    print(f"{'policy':<24} {'offload':>8} {'misroute':>9} {'cloud->local':>13} {'local->cloud':>13}")
    for name, policy in policies():
        offload, mis, c2l, l2c, _ = score(policy, probas, gold)
        print(f"{name:<24} {offload:8.3f} {mis:9.3f} {c2l:13d} {l2c:13d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
