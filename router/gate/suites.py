"""smf-bench's case format: YAML files of cases, as documents (``---``) or as a list.

A case has an ``id``, a ``category``, a ``prompt``, an ``evaluator`` and what that evaluator
needs (``expected``; ``expected_keywords`` and ``min_matches`` for keyword scoring), with
optional ``difficulty``, ``max_tokens``, ``temperature`` and ``metadata`` (``tools``,
``eval_type``, ``unit``, ``op``, ``must_not_match``). Anything else is kept and ignored.
A path may be a file or a folder (every ``*.yaml``/``*.yml`` under it, in name order).
Cases of evaluators the gate does not grade (smf-bench's ``agentic_file_check``,
``llm_judge``, a ``programmatic`` checker) are counted and left out, not guessed at.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import yaml

EVALUATORS = ("regex_match", "text_match", "text_contains", "structural_count", "tool_call", "programmatic")
DIFFICULTIES = ("easy", "medium", "hard", "expert", "frontier")  # smf-bench's ladder, in order


class SuiteError(ValueError):
    """A case file that cannot be run; the message names the file and the case."""


@dataclass(frozen=True)
class Case:
    id: str
    category: str
    prompt: str
    evaluator: str
    expected: Any = None
    difficulty: str | None = None
    max_tokens: int = 1024
    temperature: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    suite: str = ""  # the file it came from

    @property
    def runs_code(self) -> bool:
        """Graded by running the model's code (``programmatic`` with ``eval_type: unit_test``)."""
        return self.evaluator == "programmatic"

    def option(self, name: str, default: Any = None) -> Any:
        """A grading option, from ``metadata`` or the case's top level (smf-bench puts
        ``expected_keywords`` at either)."""
        return self.metadata.get(name, default)


class Loaded(NamedTuple):
    cases: list[Case]
    skipped: dict[str, int]  # evaluator → cases the gate does not grade (agentic_file_check, llm_judge)


def load(paths: Iterable[str | Path]) -> Loaded:
    """Every case under ``paths`` that the gate can grade, and a count of those it cannot;
    SuiteError for a bad file, a bad case or a repeated id."""
    cases: list[Case] = []
    skipped: dict[str, int] = {}
    seen: dict[str, str] = {}
    for file in _files(paths):
        for item, where in _items(file):
            unsupported = _unsupported(item)
            if unsupported:
                skipped[unsupported] = skipped.get(unsupported, 0) + 1
                continue
            case = parse_case(item, where, file.stem)
            if case.id in seen:
                raise SuiteError(f"{file}: case {case.id!r} is also in {seen[case.id]}")
            seen[case.id] = str(file)
            cases.append(case)
    if not cases:
        raise SuiteError("no cases the gate can grade: give smf-bench suite files or folders")
    return Loaded(cases, skipped)


def _unsupported(item: Any) -> str | None:
    """The evaluator of a case the gate does not grade, or None."""
    if not isinstance(item, dict) or not isinstance(item.get("evaluator"), str):
        return None  # parse_case says what is wrong with it
    evaluator = item["evaluator"]
    if evaluator not in EVALUATORS:
        return evaluator
    metadata = item.get("metadata")
    if (
        evaluator == "programmatic"
        and isinstance(metadata, dict)
        and metadata.get("eval_type") != "unit_test"
    ):
        return "programmatic (checker)"
    return None


def _files(paths: Iterable[str | Path]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        elif path.is_file():
            found.append(path)
        else:
            raise SuiteError(f"{path}: no such file or folder")
    return found


def _items(file: Path) -> list[tuple[Any, str]]:
    """The file's cases, each with where it is (``file[n]``)."""
    try:
        documents = [d for d in yaml.safe_load_all(file.read_text(encoding="utf-8")) if d is not None]
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{file}: not readable YAML ({type(exc).__name__})") from None
    items: list[Any] = []
    for document in documents:
        items += document if isinstance(document, list) else [document]
    return [(item, f"{file}[{n}]") for n, item in enumerate(items)]


def parse_case(raw: Any, where: str, suite: str = "") -> Case:
    if not isinstance(raw, dict):
        raise SuiteError(f"{where}: a case must be a mapping")
    for key in ("id", "category", "prompt", "evaluator"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise SuiteError(f"{where}: {key} must be a non-empty string")
    ident = raw["id"]
    if raw["evaluator"] not in EVALUATORS:
        raise SuiteError(f"{where} ({ident}): the gate does not grade {raw['evaluator']!r}")
    metadata = raw.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise SuiteError(f"{where} ({ident}): metadata must be a mapping")
    for key in ("expected_keywords", "min_matches"):
        if key in raw:
            metadata = {key: raw[key], **metadata}
    max_tokens = raw.get("max_tokens", 1024)
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens <= 0:
        raise SuiteError(f"{where} ({ident}): max_tokens must be a positive integer")
    temperature = raw.get("temperature")
    if temperature is not None and (
        isinstance(temperature, bool) or not isinstance(temperature, int | float)
    ):
        raise SuiteError(f"{where} ({ident}): temperature must be a number")
    difficulty = raw.get("difficulty")
    case = Case(
        id=ident,
        category=raw["category"],
        prompt=raw["prompt"],
        evaluator=raw["evaluator"],
        expected=raw.get("expected"),
        difficulty=str(difficulty) if difficulty is not None else None,
        max_tokens=max_tokens,
        temperature=float(temperature) if temperature is not None else None,
        metadata=metadata,
        suite=suite,
    )
    _check_grading(case, where)
    return case


def _check_grading(case: Case, where: str) -> None:
    """What the case's evaluator needs is there and well typed: fail before any request."""
    where = f"{where} ({case.id})"
    ev, expected = case.evaluator, case.expected
    if ev in ("regex_match", "text_match") and not isinstance(expected, str | int | float):
        raise SuiteError(f"{where}: {ev} needs expected: a string")
    if ev == "text_contains" and expected is None and not isinstance(case.option("expected_keywords"), list):
        raise SuiteError(f"{where}: text_contains needs expected or expected_keywords")
    units = ("line", "sentence", "stanza", "paragraph")
    if ev == "structural_count" and (not isinstance(expected, int) or case.option("unit") not in units):
        raise SuiteError(f"{where}: structural_count needs expected: N and metadata.unit: {'|'.join(units)}")
    if ev == "tool_call" and not isinstance(case.option("tools"), list):
        raise SuiteError(f"{where}: tool_call needs metadata.tools")
    if ev == "programmatic" and (case.option("eval_type") != "unit_test" or not isinstance(expected, str)):
        raise SuiteError(
            f"{where}: programmatic is run only as eval_type: unit_test with assertions in expected"
        )
