"""The low-confidence policy as a measured choice: offload share against misroutes.

    .venv/bin/python bench/classifier_confidence.py [--weights PATH] [FILE.jsonl ...]

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

A misroute is a request whose route differs from its gold intent's route; ``cloud->local`` are
cloud work served by the local box (the quality risk), ``local->cloud`` local work paid for in
the cloud (the cost).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from classifier.model import INTENTS, IntentModel, route_of
from classifier.train import SEALED_DIR, load_jsonl

FLOORS = (0.4, 0.5, 0.6)
MARGINS = (0.05, 0.1, 0.2)

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


def mass_route(p: Proba) -> str:
    """The route whose intents hold more probability in total."""
    return "cloud" if sum(v for k, v in p.items() if route_of(k) == "cloud") > 0.5 else "local"


def policies() -> list[tuple[str, Policy]]:
    out: list[tuple[str, Policy]] = [("top (no floor)", top_route), ("route mass (no floor)", mass_route)]
    for f in FLOORS:
        out.append((f"default, floor {f}", default_policy(f)))
        out += [(f"margin {m}, floor {f}", margin_policy(f, m)) for m in MARGINS]
        out.append((f"class, floor {f}", class_policy(f)))
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="labelled JSONL (default: the sealed sets)")
    ap.add_argument("--weights", default=None)
    args = ap.parse_args(argv)
    files = args.files or sorted(str(p) for p in SEALED_DIR.glob("*.jsonl"))
    model = IntentModel.load(args.weights)
    examples = [e for f in files for e in load_jsonl(f)]
    probas = [dict(zip(model.classes, model.predict_proba(e.request), strict=True)) for e in examples]
    gold = [e.intent for e in examples]
    assert set(model.classes) == set(INTENTS)
    gold_local = sum(route_of(g) == "local" for g in gold) / len(gold)
    print(
        f"weights {model.version}; {len(gold)} requests from {len(files)} files; gold local share {gold_local:.3f}"
    )
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
