"""What would a second stage for uncertain requests buy, left one hand-written set out at a time?

    .venv/bin/python bench/classifier_handwritten.py --no-sealed --no-corpus --second-stage

The candidate (issue 29 allows one): a nearest-neighbour vote over the hand-written requests,
asked only when the linear model is unsure. Each request is the set of feature keys the linear
model reads (``classifier.features``), each key weighted by its inverse document frequency
among the hand-written requests; a request's neighbours are the most similar requests by
cosine, and their gold intents, weighted by similarity, are its second opinion. It needs no
model download and no torch (a sparse matrix of a few thousand rows), and it answers what the
linear model cannot: "this request looks like *that* hand-written one", whatever the 12,000
generated requests taught the weights.

For each left-out set (in ``bench/classifier_handwritten.py``'s folds: the recipe fitted
without it, decided as the proxy decides), the requests the policy classified below each confidence
``--floor`` are decided again by the blend of the two (the linear model's probabilities and
the neighbours', half each): the route holding more probability. The neighbours are the
*other* hand-written sets. Printed: route accuracy of the linear model alone and with the
second stage, per floor, pooled. No fit of its own: the folds are the leave-one-out's.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import sparse

from classifier.evaluate import decide_one, proxy_policy
from classifier.features import extract, to_dict
from classifier.model import INTENTS, IntentModel, Prediction, route_of
from classifier.train import Example

FLOORS = (0.5, 0.6, 0.7, 0.8)
NEIGHBOURS = 7


class Recording:
    """The model the policy asks, keeping what it was asked last and what it answered."""

    def __init__(self, model: IntentModel) -> None:
        self.model, self.version, self.classes = model, model.version, model.classes
        self.last: tuple[Any, Prediction] | None = None

    def predict(self, request: Any) -> Prediction:
        prediction = self.model.predict(request)
        self.last = (request, prediction)
        return prediction


def decided(model: IntentModel, examples: Sequence[Example]) -> list[tuple[str, Any, Prediction | None]]:
    """Per example: the route the proxy gives it, the request it classified and the prediction."""
    recording = Recording(model)
    policy = proxy_policy(recording)
    out = []
    for e in examples:
        recording.last = None
        _, route = decide_one(policy, e.request)
        request, prediction = recording.last or (None, None)
        out.append((route, request, prediction))
    return out


class Neighbours:
    """Cosine over idf-weighted feature keys, against labelled requests."""

    def __init__(self, keys: list[set[str]], intents: list[str]) -> None:
        df = Counter(k for ks in keys for k in ks)
        n = len(keys)
        self.idf = {k: math.log(n / c) for k, c in df.items() if c > 1}
        self.column = {k: j for j, k in enumerate(self.idf)}
        self.matrix = sparse.vstack([self._row(ks) for ks in keys]).tocsr()
        self.labels = np.array([INTENTS.index(i) for i in intents])

    def _row(self, keys: set[str]) -> sparse.csr_matrix:
        cols = [self.column[k] for k in keys if k in self.column]
        vals = np.array([self.idf[k] for k in keys if k in self.column])
        norm = float(np.sqrt((vals**2).sum())) or 1.0
        return sparse.csr_matrix((vals / norm, ([0] * len(cols), cols)), shape=(1, len(self.column)))

    def vote(self, keys: set[str], k: int = NEIGHBOURS) -> np.ndarray:
        sims = (self.matrix @ self._row(keys).T).toarray().ravel()
        top = np.argsort(-sims)[:k]
        votes = np.zeros(len(INTENTS))
        np.add.at(votes, self.labels[top], np.maximum(sims[top], 0.0))
        total = votes.sum()
        return votes / total if total else np.full(len(INTENTS), 1 / len(INTENTS))


def blended_route(prediction: Prediction, classes: Sequence[str], knn: np.ndarray) -> str:
    mass = {"local": 0.0, "cloud": 0.0}
    for c, p in zip(classes, prediction.probabilities, strict=True):
        mass[route_of(c)] += 0.5 * p + 0.5 * float(knn[INTENTS.index(c)])
    return max(mass, key=mass.__getitem__)


def keys_of(request: Any) -> set[str]:
    return set(to_dict(extract(request)))


class SecondStage:
    """The second stage's score on each left-out set, beside the linear model's, per floor:
    ``bench/classifier_handwritten.py --second-stage`` feeds it each fold."""

    def __init__(self, files: dict[str, tuple[list[Example], float]]) -> None:
        self.files = files
        self.index_keys: dict[str, list[set[str]]] = {}  # each set's requests as classified
        self.totals = {f: [0, 0, 0] for f in FLOORS}  # n, linear alone, with the second stage

    def fold(self, name: str, model: IntentModel) -> str:
        """Score left-out set ``name`` with ``model`` (fitted without it); one line of figures."""
        for other, (part, _) in self.files.items():
            if other not in self.index_keys:  # the classified request does not depend on weights
                self.index_keys[other] = [
                    keys_of(r) if r is not None else set() for _, r, _ in decided(model, part)
                ]
        others = [o for o in self.files if o != name]
        knn = Neighbours(
            [k for o in others for k in self.index_keys[o]],
            [e.intent for o in others for e in self.files[o][0]],
        )
        held = self.files[name][0]
        rows = [(route_of(e.intent), *d) for e, d in zip(held, decided(model, held), strict=True)]
        votes = {
            i: knn.vote(keys_of(request))
            for i, (_, _, request, prediction) in enumerate(rows)
            if prediction is not None and prediction.confidence < max(FLOORS)
        }
        line = []
        for floor in FLOORS:
            alone = sum(gold == route for gold, route, _, _ in rows)
            with_stage = sum(
                gold
                == (
                    blended_route(p, model.classes, votes[i])
                    if p is not None and p.confidence < floor
                    else route
                )
                for i, (gold, route, _, p) in enumerate(rows)
            )
            n, a, w = self.totals[floor]
            self.totals[floor] = [n + len(held), a + alone, w + with_stage]
            line.append(f"{floor}: {alone}->{with_stage}")
        return "  ".join(line)

    def summary(self) -> str:
        lines = ["pooled, routed right (linear alone / with the second stage below the floor):"]
        for floor, (n, alone, with_stage) in self.totals.items():
            lines.append(
                f"floor {floor}: {alone / n:.3f} / {with_stage / n:.3f}   ({alone} and {with_stage} of {n})"
            )
        return "\n".join(lines)
