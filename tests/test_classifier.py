"""Tests of the intent classifier (classifier/): export fidelity, accuracy, robustness, bounds.

Run: .venv/bin/python -m pytest tests/test_classifier.py -q
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from classifier import INTENTS, IntentModel, Prediction
from classifier.features import extract, to_dict

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "classifier" / "data"
# Requests written by hand for this project, trained on at the recipe's weights
# (classifier.train.packaged_recipe): English agent traffic in the real wrappers (v1-v8 and
# v11-v14, each written blind by a separate hand), pasted material and redirections, a
# development set, agent traffic and chat in eight other languages.
HANDWRITTEN = DATA / "handwritten"
# Written by hand and never trained on: what the packaged weights are measured on.
SEALED = DATA / "sealed"
TRAIN = DATA / "train.jsonl"
AGENT_REQUESTS = ROOT / "tests" / "data" / "agent_requests"
AGENT_FORMATS = {
    "claude_code",
    "codex",
    "cline",
    "roo",
    "aider",
    "openhands",
    "continue",
    "ide_edit",
    "fim",
    "rag",
}

# Route accuracy is measured as the proxy decides (classifier.evaluate.policy_decide_all:
# Policy.decide with the packaged config, so a tool-loop turn takes its task's decision and a
# low-confidence guess goes to the route holding more probability).
# Regression guards, a little under what the packaged weights score on the sealed sets
# (bench/README.md): round 6's blind sets, scored once, v16 0.928 (167/180) and agents_langs_v3
# 0.887 (142/160); round 5's, scored blind by round 5's weights and again by these, v9 0.975,
# v10 0.956, v15 0.963, languages_v2 0.931, and the older language set 0.933.
SEALED_ROUTE_ACCURACY_FLOOR = {
    "agents_en_v9": 0.94,
    "agents_en_v10": 0.94,
    "agents_en_v15": 0.94,
    "agents_en_v16": 0.91,
    "languages": 0.91,
    "languages_v2": 0.91,
    "agents_langs_v3": 0.87,
}


@pytest.fixture(scope="module")
def model() -> IntentModel:
    return IntentModel.load()


def _load(path: Path):
    from classifier.train import load_jsonl

    return load_jsonl(path)


def _route_accuracy(model: IntentModel, path: Path) -> tuple[int, int]:
    """(correct, n): routes as Policy.decide gives them with the packaged config."""
    from classifier.evaluate import routed_correctly

    examples = _load(path)
    return routed_correctly(model, examples), len(examples)


# --------------------------------------------------------------------------- fidelity


def test_exported_model_equals_sklearn_on_eval_set() -> None:
    """The pure-Python scorer reproduces scikit-learn's predict_proba (labels equal, <1e-6)."""
    from classifier.train import export, fit

    train = _load(TRAIN)[::3]  # a third of the corpus keeps this test a few seconds
    clf, vec = fit(train, c=1.0, min_df=2)
    exported = IntentModel.from_json(export(clf, vec))
    assert list(exported.classes) == list(clf.classes_)

    evaluation = _load(HANDWRITTEN / "chat_en_de_fr_es.jsonl") + _load(TRAIN)[1::7]
    x = vec.transform([to_dict(extract(e.request)) for e in evaluation])
    sk_proba = clf.predict_proba(x)
    sk_labels = clf.predict(x)
    worst = 0.0
    for i, e in enumerate(evaluation):
        ours = exported.predict_proba(e.request)
        worst = max(worst, max(abs(a - b) for a, b in zip(ours, sk_proba[i], strict=True)))
        assert exported.predict(e.request).intent == sk_labels[i], e.id
    assert worst < 1e-6, worst


# --------------------------------------------------------------------------- accuracy


@pytest.mark.parametrize("name", sorted(SEALED_ROUTE_ACCURACY_FLOOR))
def test_sealed_route_accuracy(model: IntentModel, name: str) -> None:
    examples = _load(SEALED / f"{name}.jsonl")
    assert {e.intent for e in examples} == set(INTENTS)
    correct, n = _route_accuracy(model, SEALED / f"{name}.jsonl")
    assert correct / n >= SEALED_ROUTE_ACCURACY_FLOOR[name], f"{correct}/{n}"


def test_hand_written_sets_cover_formats_and_languages() -> None:
    """Each hand-written agent line says its agent format; every agent set covers the real
    wrappers and all six intents; every language of the sealed language sets has 20 or 30
    requests of all six intents."""
    agent_sets = [*sorted(HANDWRITTEN.glob("agents_en_v*.jsonl")), *sorted(SEALED.glob("agents_en_v*.jsonl"))]
    assert {p.stem for p in agent_sets} >= {f"agents_en_v{n}" for n in range(1, 11)}
    for path in agent_sets:
        agents = _load(path)
        assert len(agents) >= 150 and {e.intent for e in agents} == set(INTENTS), path.name
        formats = {e.tags["format"] for e in agents}
        if "api" in agents[0].tags:  # round 6: raw bodies written for the three APIs
            assert {e.tags["api"] for e in agents} == {"chat", "responses", "messages"}, path.name
            assert formats >= {"claude_code", "codex", "cline", "roo", "aider", "openhands", "continue"}, (
                path.name
            )
            continue
        assert formats >= AGENT_FORMATS, (path.name, AGENT_FORMATS - formats)
        assert formats & {"parts", "text_parts"}, path.name
    groups = {e.tags["group"] for e in _load(HANDWRITTEN / "payload_en.jsonl")}
    assert groups == {"payload", "redirect"}
    for name, per_language in (("languages", 30), ("languages_v2", 20), ("agents_langs_v3", 20)):
        by_lang: dict[str, list[str]] = {}
        for e in _load(SEALED / f"{name}.jsonl"):
            by_lang.setdefault(e.tags["language"], []).append(e.intent)
        assert set(by_lang) == {"de", "fr", "es", "pt", "zh", "ja", "ru", "ko"}, name
        for lang, intents in by_lang.items():
            assert len(intents) >= per_language and set(intents) == set(INTENTS), (name, lang)


def test_packaged_weights_are_the_recipe_and_never_saw_the_sealed_sets() -> None:
    """The packaged weights are what ``python -m classifier.train`` builds from the recipe
    (the same predictions, to 1e-4, on every sealed request), and no sealed request is in the
    recipe: the figures measured on them are of traffic the weights never learnt from."""
    from classifier.train import fit_model, packaged_recipe

    examples, weights = packaged_recipe()
    seen = {orjson.dumps(e.request) for e in examples}
    sealed = [e for p in sorted(SEALED.glob("*.jsonl")) for e in _load(p)]
    assert len(sealed) >= 1840
    assert not any(orjson.dumps(e.request) in seen for e in sealed)
    packaged = IntentModel.load()
    meta = orjson.loads((ROOT / "classifier" / "weights" / "intent.json").read_bytes())["meta"]
    trained_on = " ".join(meta["data"])
    assert meta["data"][0] == TRAIN.name
    assert all(f"handwritten/{p.name} x" in trained_on for p in HANDWRITTEN.glob("*.jsonl"))
    rebuilt = fit_model(examples, sample_weight=weights)
    worst = 0.0
    for e in sealed:
        ours, theirs = packaged.predict_proba(e.request), rebuilt.predict_proba(e.request)
        worst = max(worst, max(abs(a - b) for a, b in zip(ours, theirs, strict=True)))
    assert worst < 1e-4, f"the packaged weights are not the recipe's: rebuild them ({worst})"


def test_cjk_text_is_read_as_character_bigrams() -> None:
    """Chinese and Japanese have no spaces: without bigrams a whole clause is one token."""
    zh = extract({"messages": [{"role": "user", "content": "请写一篇博客文章，介绍我们的新品牌"}]})
    assert {"博客", "文章", "品牌"} <= zh.user
    assert "lex:writing:2" in zh.struct  # the lexicons know CJK words too
    ja = extract({"messages": [{"role": "user", "content": "この関数のエラーを修正して"}]})
    assert {"関数", "修正"} <= ja.user
    # ASCII text is tokenised as before: no bigrams of anything
    en = extract({"messages": [{"role": "user", "content": "write a blog post about our brand"}]})
    assert en.user == {"write", "a", "blog", "post", "about", "our", "brand"}


def test_last_user_turn_decides_over_context(model: IntentModel) -> None:
    """A math question asked inside a coding-agent conversation is math."""
    req = {
        "messages": [
            {
                "role": "system",
                "content": "You are a coding agent. Use tools to edit files. Run pytest after edits.",
            },
            {
                "role": "user",
                "content": "Fix this:\n```python\ndef f(x):\n    return x[0]\n```\nIndexError: list index out of range",
            },
            {"role": "assistant", "content": "Added a guard for the empty list; tests pass."},
            {
                "role": "user",
                "content": "thanks. unrelated: prove that the sum of the first n odd numbers is n^2, by induction",
            },
        ],
        "tools": [{"type": "function", "function": {"name": "edit_file", "description": "Edit a file"}}],
    }
    assert model.predict(req).intent == "math"


def _claude_code_with(ask: str) -> dict[str, Any]:
    """The recorded Claude Code request (24 tools, its system prompt and reminders), with ``ask``
    as the user's sentence, in the chat-shaped view the policy classifies."""
    from router.dialects import MESSAGES

    body = orjson.loads((AGENT_REQUESTS / "claude_task.json").read_bytes())["body"]
    body["messages"][0]["content"][1]["text"] = ask
    return MESSAGES.view(body)


@pytest.mark.parametrize(
    ("ask", "route"),
    [
        ("derive the expected number of comparisons quicksort makes on n distinct keys", "cloud"),
        ("read the design doc and decide whether we should shard by tenant or by region; argue it", "cloud"),
        ("write a 600-word launch post for our blog about the new offline mode, warm tone", "cloud"),
        ("check the formula in pricing.py: prove that the discount can never exceed the subtotal", "cloud"),
        ("run the test suite and tell me which tests fail", "local"),
        ("implement Kahan summation in utils/sum.py with tests", "local"),
        ("add a reading-time estimate to the blog posts", "local"),
        ("add a word count to the blog post editor", "local"),
        # File operations whose files sound like prose or maths are still tool work (f15).
        ("move essay_draft.txt and proof_notes.md into the archive folder and list what's left", "local"),
    ],
)
def test_agent_context_does_not_outweigh_the_ask(model: IntentModel, ask: str, route: str) -> None:
    """Inside Claude Code (24 tools, an agent system prompt) the ask decides: maths,
    reasoning and writing asked in a repository's vocabulary go to the cloud, and coding or tool
    asks about maths or prose stay local."""
    from classifier.evaluate import policy_decide_all
    from classifier.train import Example

    [(_, decided)] = policy_decide_all(model, [Example(_claude_code_with(ask), "coding", "t", "t")])
    assert decided == route, ask


def test_long_tool_lists_are_told_apart_from_a_tasks_tools() -> None:
    """An agent's standing list (more than FEW_TOOLS tools, or a shell, editor or patch tool
    among a few: Codex and OpenHands offer five) gives ``tools:many`` and its own match features;
    its generic words (read, write, list, file) match nothing. A task's few tools do not."""
    from classifier.view import FEW_TOOLS

    agent = extract(_claude_code_with("write a blog post and read it back to me"))
    assert "tools:many" in agent.struct and "tools" not in agent.struct
    assert "toolmatch_many:0" in agent.struct
    few = extract(
        {
            "messages": [{"role": "user", "content": "what's the weather in Lyon tomorrow?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Forecast"}}],
        }
    )
    assert "tools" in few.struct and "toolmatch:1" in few.struct
    assert FEW_TOOLS < 16
    ask = [{"role": "user", "content": "is the retention job GDPR-safe? read-only, no edits"}]
    for names in (
        ("exec_command", "apply_patch", "view_image", "write_stdin", "request_user_input"),
        ("execute_bash", "str_replace_editor", "think", "finish", "web_read"),
    ):
        tools = [{"type": "function", "function": {"name": n, "description": ""}} for n in names]
        assert len(tools) <= FEW_TOOLS
        assert "tools:many" in extract({"messages": ask, "tools": tools}).struct, names
    booking = [
        {"type": "function", "function": {"name": n, "description": ""}}
        for n in ("search_availability", "create_booking", "cancel_booking", "send_confirmation")
    ]
    assert "tools" in extract({"messages": ask, "tools": booking}).struct


def test_a_tool_list_is_read_by_what_it_says_not_by_a_cached_one() -> None:
    """The words of an offered tool list are gathered once per distinct list (agents resend the
    same list every turn), but a list that differs in a name, a description or its length reads
    as itself: a cached list never answers for another."""
    from classifier.view import view

    ask = [{"role": "user", "content": "book me the 3pm slot"}]

    def tools(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": n, "description": d}} for n, d in pairs]

    booking = tools(("create_booking", "Reserve a table"), ("cancel_booking", "Cancel a reservation"))
    first = view({"messages": ask, "tools": booking})
    again = view({"messages": ask, "tools": orjson.loads(orjson.dumps(booking))})  # new objects
    assert first.tool_words == again.tool_words and {"reserve", "table"} <= first.tool_words
    other = view(
        {
            "messages": ask,
            "tools": tools(
                ("create_booking", "Reserve a hotel room"), ("cancel_booking", "Cancel a reservation")
            ),
        }
    )
    assert "hotel" in other.tool_words and "table" not in other.tool_words
    shell = view({"messages": ask, "tools": [*booking, *tools(("exec_command", "Run a shell command"))]})
    assert shell.workbench and not first.workbench and shell.n_tools == 3 and first.n_tools == 2
    flat = view(
        {
            "messages": ask,
            "tools": [{"type": "function", "name": "create_booking", "description": "Reserve a table"}],
        }
    )
    assert {"reserve", "table"} <= flat.tool_words  # a Responses-style flat tool


def test_completions_body_and_content_parts(model: IntentModel) -> None:
    assert model.predict({"prompt": "def quicksort(xs):\n    # sort the list in place\n"}).intent == "coding"
    parts = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                    {
                        "type": "text",
                        "text": "Write a 1500-word blog post about slow travel in our brand voice.",
                    },
                ],
            }
        ]
    }
    assert model.predict(parts).intent == "writing"


# --------------------------------------------------------------------------- robustness

MALFORMED: list[Any] = [
    None,
    {},
    [],
    "just a string",
    42,
    {"messages": "hello, fix my code"},
    {"messages": [1, 2, 3]},
    {"messages": [None]},
    {"messages": None},
    {"messages": [{"role": "user"}]},
    {"messages": [{"role": "user", "content": None}]},
    {"messages": [{"role": "user", "content": 12345}]},
    {"messages": [{"role": "user", "content": [{"type": "audio", "data": "..."}]}]},
    {"messages": [{"role": "user", "content": [{"type": "text", "text": None}]}]},
    {"messages": [{"role": "user", "content": [{"type": "text", "text": ["nested"]}]}]},
    {"messages": [{"role": "user", "content": [1, None, "bare string part", {"text": 5}]}]},
    {"messages": [{"role": 7, "content": {"weird": True}}]},
    {"messages": [{"role": "tool", "content": "result"}], "tools": "not a list"},
    {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [None, 1, {"function": None}, {"function": {"name": 3}}],
    },
    {"prompt": None},
    {"prompt": [1, 2, 3]},
    {"prompt": ["a", None, {"x": 1}]},
    {"messages": [{"role": "user", "content": "\udcff\ud800 lone surrogates"}]},
    {"messages": [{"role": "user", "content": "\x00" * 10_000}]},
    {"messages": [{"role": "system", "content": [{"type": "text", "text": "sys"}]}] * 5000},
]


@pytest.mark.parametrize("request_body", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_requests_never_raise(model: IntentModel, request_body: Any) -> None:
    pred = model.predict(request_body)
    assert isinstance(pred, Prediction)
    assert pred.intent in INTENTS
    assert 0.0 <= pred.confidence <= 1.0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=50),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=30,
)
roles = st.sampled_from(["user", "assistant", "system", "tool", "developer", None, 3])
parts = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "image_url", "input_audio", None]), "text": json_values}
    ),
    json_values,
)
messages = st.lists(
    st.fixed_dictionaries(
        {"role": roles, "content": st.one_of(st.text(max_size=200), st.lists(parts, max_size=4), json_values)}
    ),
    max_size=6,
)
requestish = st.one_of(
    st.dictionaries(st.sampled_from(["messages", "prompt", "tools", "model", "x"]), json_values, max_size=4),
    st.fixed_dictionaries({"messages": messages}, optional={"tools": json_values, "prompt": json_values}),
    json_values,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requestish)
def test_property_predict_never_raises(request_body: Any) -> None:
    pred = _MODEL.predict(request_body)
    assert pred.intent in INTENTS
    assert 0.0 <= pred.confidence <= 1.0


_MODEL = IntentModel.load()


# --------------------------------------------------------------------------- bounded work


def _request_of_size(size: int) -> dict[str, Any]:
    code = "def f(x):\n    return x * 2  # doubles\n"
    user = "Why does this fail?\n```python\n" + (code * (size // (2 * len(code)) + 1))[: size // 2] + "\n```"
    turn = "earlier output " * 64
    history: list[dict[str, str]] = []
    while sum(len(m["content"]) for m in history) < size // 2:
        history += [{"role": "user", "content": turn}, {"role": "assistant", "content": turn}]
    return {
        "messages": [
            {"role": "system", "content": "You are a coding agent."},
            *history,
            {"role": "user", "content": user},
        ]
    }


def _median_times(
    model: IntentModel, small: dict[str, Any], big: dict[str, Any], n: int = 301
) -> tuple[float, float]:
    """Medians of interleaved timings: both sizes see the same load from other processes."""
    for _ in range(20):
        model.predict(small)
        model.predict(big)
    t_small, t_big = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        model.predict(small)
        t1 = time.perf_counter()
        model.predict(big)
        t2 = time.perf_counter()
        t_small.append(t1 - t0)
        t_big.append(t2 - t1)
    t_small.sort()
    t_big.sort()
    return t_small[n // 2], t_big[n // 2]


def test_one_megabyte_request_is_bounded(model: IntentModel) -> None:
    small = _request_of_size(4096)
    big = _request_of_size(1 << 20)
    assert len(orjson.dumps(big)) > 1_000_000
    t_small, t_big = _median_times(model, small, big)
    assert t_big / t_small < 5.0, (t_small, t_big)


# --------------------------------------------------------------------------- packaging & CLIs


def test_packaged_weights_version_and_no_sklearn_at_serving_time() -> None:
    code = (
        "import sys\nfrom classifier import IntentModel\nm = IntentModel.load()\n"
        "m.predict({'messages': [{'role': 'user', 'content': 'hi'}]})\n"
        "assert 'sklearn' not in sys.modules, 'serving imported scikit-learn'\nprint(m.version)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    version = out.stdout.strip()
    assert version.startswith("intent-2026.11-") and len(version) == len("intent-2026.11-") + 8


def test_train_and_eval_clis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from classifier import evaluate, train

    out = tmp_path / "w.json"
    packaged = (ROOT / "classifier" / "weights" / "intent.json").read_bytes()
    # Trained on other data, the weights go where --out says; without it, nothing is written.
    chat = HANDWRITTEN / "chat_en_de_fr_es.jsonl"
    assert train.main(["--data", str(chat), "--min-df", "1"]) == 2
    assert (ROOT / "classifier" / "weights" / "intent.json").read_bytes() == packaged
    assert train.main(["--data", str(chat), "--out", str(out), "--min-df", "1"]) == 0
    assert IntentModel.load(str(out)).predict({"prompt": "x"}).intent in INTENTS
    assert evaluate.main([str(chat), "--weights", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "route accuracy=" in printed and "gold \\ pred" in printed


def test_hand_written_sets_not_generated() -> None:
    """The hand-written sets are hand-written: none of their requests occur in the generated
    corpus."""
    train_users = {orjson.dumps(e.request) for e in _load(TRAIN)}
    sealed = sorted(SEALED.glob("*.jsonl"))
    assert {p.stem for p in sealed} >= set(SEALED_ROUTE_ACCURACY_FLOOR)
    for path in (*sorted(HANDWRITTEN.glob("*.jsonl")), *sealed):
        assert not any(orjson.dumps(e.request) in train_users for e in _load(path)), path


def test_eval_policy_scores_the_proxys_routes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``offload eval --policy CONFIG`` scores the routes Policy.decide gives, not the top intent's:
    with a team rule that sends every request without tools to the cloud, plain coding asks
    score route 1.000 by their intent and 0.000 as the proxy routes them."""
    import yaml

    from classifier import evaluate

    asks = [
        "fix the off-by-one in this loop: for i in range(len(xs) + 1): print(xs[i])",
        "write a python function that reverses a linked list",
    ]
    data = tmp_path / "coding.jsonl"
    lines = (
        {"id": f"c{i}", "intent": "coding", "request": {"messages": [{"role": "user", "content": ask}]}}
        for i, ask in enumerate(asks)
    )
    data.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    doc = yaml.safe_load((ROOT / "config" / "router.yaml").read_text())
    doc["routing"]["rules"] = [{"name": "all-cloud", "match": {"tools": False}, "route": "cloud"}]
    config = tmp_path / "router.yaml"
    config.write_text(yaml.safe_dump(doc))
    recipe = ROOT / "config" / "laguna-spark.yaml"  # the config names its recipe beside it
    (tmp_path / recipe.name).write_bytes(recipe.read_bytes())
    assert evaluate.main([str(data)]) == 0
    assert "route accuracy=1.000" in capsys.readouterr().out
    assert evaluate.main([str(data), "--policy", str(config)]) == 0
    assert "route accuracy=0.000" in capsys.readouterr().out
