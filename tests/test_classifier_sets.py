"""The hand-written sets written as raw client bodies (``classifier/data/*/raw/``): each line of a
set is its raw body's dialect view, and the proxy decides the raw body, sent to its own endpoint,
exactly as the evaluation decides the stored view.

Run: .venv/bin/python -m pytest tests/test_classifier_sets.py -q
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import orjson
import pytest

from classifier.data.raw import api_of, convert_line, dialect_of, read_raw
from classifier.model import IntentModel
from classifier.train import HANDWRITTEN_DIR, SEALED_DIR, load_jsonl
from router.config import load_config
from router.decide.policy import Policy
from router.dialects import CHAT

ROOT = Path(__file__).resolve().parents[1]
RAW_SETS = sorted([*HANDWRITTEN_DIR.glob("raw/*.jsonl"), *SEALED_DIR.glob("raw/*.jsonl")])


@cache
def _policy() -> Policy:
    return Policy(load_config(str(ROOT / "config" / "router.yaml")), IntentModel.load())


def _converted(raw_path: Path) -> Path:
    return raw_path.parent.parent / raw_path.name


def test_the_raw_sets_are_there() -> None:
    names = {p.name for p in RAW_SETS}
    assert {"roles_en_v1.jsonl", "agents_langs_v1.jsonl"} <= names
    for path in RAW_SETS:
        assert _converted(path).exists(), f"{path} has no converted set beside its folder"


@pytest.mark.parametrize("raw_path", RAW_SETS, ids=lambda p: p.stem)
def test_each_line_is_the_view_of_its_raw_body(raw_path: Path) -> None:
    """Regenerating the set from its raw bodies gives the stored lines: the dialect views the
    evaluation reads are the ones the proxy computes today."""
    stored = [orjson.loads(line) for line in _converted(raw_path).read_bytes().splitlines() if line.strip()]
    raws = list(read_raw(raw_path))
    assert len(stored) == len(raws)
    for line, raw in zip(stored, raws, strict=True):
        assert convert_line(raw, line["id"]) == line, line["id"]


@pytest.mark.parametrize("raw_path", RAW_SETS, ids=lambda p: p.stem)
def test_the_proxy_decides_each_raw_body_as_the_evaluation_does(raw_path: Path) -> None:
    """Each raw body, decided through its own endpoint's dialect (as ``POST /v1/messages``,
    ``/v1/responses`` and ``/v1/chat/completions`` decide it), gets the decision that
    ``classifier.evaluate --policy`` computes from the stored view: so a set's figure is the
    proxy's, in each of the three APIs."""
    examples = {e.id: e for e in load_jsonl(_converted(raw_path))}
    apis: Counter[str] = Counter()
    for raw in read_raw(raw_path):
        body = raw["body"]
        api = api_of(raw)
        apis[api] += 1
        dialect = dialect_of(api)
        real = _policy().decide(body, None, len(orjson.dumps(body)), dialect)
        view = examples[raw["id"]].request
        evaluated = _policy().decide(view, None, len(orjson.dumps(body)), CHAT)
        assert (real.intent, real.route, real.reason) == (
            evaluated.intent,
            evaluated.route,
            evaluated.reason,
        ), raw["id"]
    assert set(apis) == {"chat", "responses", "messages"}, apis
