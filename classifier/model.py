"""Serving-time intent model: JSON weights, pure-Python scoring (no scikit-learn).

The model is a multinomial logistic regression over binary features (see ``features.py``).
Scoring a request is ``softmax(intercept + sum of weight rows of the active features)``.
Each namespace maps a feature to its row number in one numpy matrix; the hot path collects
row numbers with ``filter(None, map(dict.get, keys))`` (all in C) and sums the rows with one
``take`` and one matrix-vector product. For ~130 active rows that is ~7 us, against ~20 us for
summing the transposed tuples with ``sum(zip(*rows))`` (see ``bench/README.md``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from importlib import resources
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np
import orjson

from classifier.features import (
    FEATURE_VERSION,
    NAMESPACE_SCALE,
    NS_CONTEXT,
    NS_PAYLOAD,
    NS_PREFIX,
    NS_STRUCT,
    NS_SUFFIX,
    NS_USER,
    Features,
    extract,
)

# The intents the model tells apart, each with the route it takes unless the proxy's config
# says otherwise (``routing.intents``): the local box takes the agent work it does well, the
# cloud the rest. The one definition: the proxy's config and the evaluation read it from here.
DEFAULT_ROUTES: Mapping[str, str] = MappingProxyType(
    {
        "coding": "local",
        "tools": "local",
        "instruction": "local",
        "math": "cloud",
        "reasoning": "cloud",
        "writing": "cloud",
    }
)
INTENTS = tuple(DEFAULT_ROUTES)
LOCAL_INTENTS = frozenset(i for i, route in DEFAULT_ROUTES.items() if route == "local")
WEIGHTS_FORMAT = "offload-intent/1"
VERSION_PREFIX = "intent-2026.11-"

Row = tuple[float, ...]


def route_of(intent: str) -> str:
    """The default route of an intent (the proxy's config may override it)."""
    return "local" if intent in LOCAL_INTENTS else "cloud"


class Prediction(NamedTuple):
    # A NamedTuple rather than a frozen dataclass: built in C, ~0.4 us less per request.
    intent: str
    confidence: float  # probability of the top class, 0..1
    # Every class's probability, in the model's ``classes`` order: what a caller needs to
    # decide a low-confidence request by where most of the probability lies.
    probabilities: tuple[float, ...] = ()


def _softmax(logits: list[float]) -> list[float]:
    top = max(logits)
    exps = [math.exp(x - top) for x in logits]
    total = sum(exps)
    return [e / total for e in exps]


class IntentModel:
    """Load once at start-up with :meth:`load`; :meth:`predict` is thread-safe (read-only)."""

    __slots__ = (
        "version",
        "classes",
        "_weights",
        "_ones",
        "_user",
        "_prefix",
        "_suffix",
        "_context",
        "_struct",
        "_payload",
        "_prior",
    )

    def __init__(
        self, classes: tuple[str, ...], intercept: Row, features: dict[str, Row], version: str
    ) -> None:
        if set(classes) - set(INTENTS):
            raise ValueError(f"unknown classes in weights: {classes}")
        self.version = version
        self.classes = classes
        # Row 0 of the matrix is the intercept; feature rows start at 1, so a row number is
        # never falsy and filter(None, ...) drops exactly the unknown features.
        rows: list[Row] = [intercept]
        # One dict per namespace so that the hot path looks up the raw token without building
        # prefixed strings. Rows already include the namespace scale.
        self._user: dict[str, int] = {}
        self._prefix: dict[str, int] = {}
        self._suffix: dict[str, int] = {}
        self._context: dict[str, int] = {}
        self._struct: dict[str, int] = {}
        self._payload: dict[str, int] = {}
        by_namespace = {
            NS_PAYLOAD: self._payload,
            NS_USER: self._user,
            NS_PREFIX: self._prefix,
            NS_SUFFIX: self._suffix,
            NS_CONTEXT: self._context,
            NS_STRUCT: self._struct,
        }
        for key, row in features.items():
            ns, name = key[:2], key[2:]
            index = len(rows)
            rows.append(tuple(w * NAMESPACE_SCALE[ns] for w in row))
            by_namespace[ns][name] = index
        self._weights = np.array(rows, dtype=np.float64).reshape(len(rows), len(classes))
        # Ones to multiply the gathered rows by (a slice of this, so no allocation per call).
        self._ones = np.ones(len(rows), dtype=np.float64)
        self._prior = self._from_logits(list(intercept))

    # ------------------------------------------------------------------ loading

    @classmethod
    def load(cls, path: str | None = None) -> IntentModel:
        """Load JSON weights (default: the packaged ``classifier/weights/intent.json``)."""
        if path is None:
            raw = resources.files("classifier").joinpath("weights/intent.json").read_bytes()
        else:
            with open(path, "rb") as fh:
                raw = fh.read()
        return cls.from_json(raw)

    @classmethod
    def from_json(cls, raw: bytes) -> IntentModel:
        doc = orjson.loads(raw)
        if doc.get("format") != WEIGHTS_FORMAT:
            raise ValueError(f"not an intent weights file (format={doc.get('format')!r})")
        if doc.get("feature_version") != FEATURE_VERSION:
            raise ValueError(
                f"weights were trained for features {doc.get('feature_version')!r}, code has {FEATURE_VERSION!r}; retrain"
            )
        classes = tuple(doc["classes"])
        features = {k: tuple(v) for k, v in doc["features"].items()}
        version = VERSION_PREFIX + hashlib.sha256(raw).hexdigest()[:8]
        return cls(classes, tuple(doc["intercept"]), features, version)

    # ------------------------------------------------------------------ scoring

    def logits(self, f: Features) -> list[float]:
        # filter(None, map(dict.get, keys)) keeps the whole lookup in C: unknown features give
        # None and are dropped. The namespaces are disjoint ranges of rows, and each Features
        # namespace is a set, so no row is counted twice.
        idx = [
            0,  # the intercept
            *filter(None, map(self._user.get, f.user)),
            *filter(None, map(self._prefix.get, f.prefixes)),
            *filter(None, map(self._suffix.get, f.suffixes)),
            *filter(None, map(self._context.get, f.context)),
            *filter(None, map(self._struct.get, f.struct)),
            *filter(None, map(self._payload.get, f.payload)),
        ]
        # ones @ rows is the column sum; numpy's matmul has less per-call overhead than sum(0).
        return (self._ones[: len(idx)] @ self._weights.take(idx, 0)).tolist()

    def _from_logits(self, logits: list[float]) -> Prediction:
        top = max(logits)
        exps = list(map(math.exp, [x - top for x in logits]))  # six classes: ~1 us in all
        total = sum(exps)
        probabilities = tuple(e / total for e in exps)
        return Prediction(self.classes[logits.index(top)], min(1.0, max(0.0, 1.0 / total)), probabilities)

    def predict_proba(self, request: Any) -> list[float]:
        """Class probabilities in ``self.classes`` order (raises on bugs; for tests/eval)."""
        return _softmax(self.logits(extract(request)))

    def predict(self, request: Any) -> Prediction:
        """Intent of an OpenAI chat or completions request body. Never raises: anything the
        extractor cannot make sense of yields the prior (the intercept-only prediction)."""
        try:
            features = extract(request)
            if not features.user and not features.context and not features.payload:
                return self._prior  # no text anywhere: shape alone is not evidence
            return self._from_logits(self.logits(features))
        except Exception:  # the proxy must keep routing whatever arrives
            return self._prior
