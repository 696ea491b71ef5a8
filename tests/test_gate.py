"""``offload gate``: scripted runs through the proxy, a stage-1 import, show and propose.

The suites here are small ones of our own in smf-bench's format; the fake upstream answers
each prompt with a scripted text or call, right for some cases and wrong for others, so a
run must reproduce the scripted pass rates exactly, per grader.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import sqlalchemy as sa
import yaml

from router.config import load_config
from router.fake.upstream import RunningFake, start_in_thread
from router.gate import propose, show, store
from router.gate.store import Result, Run, fingerprint
from router.ledger import db, report
from router.ledger.models import usage_table
from router.ops.cli import main
from router.ops.demo import simulated_backends
from tests.conftest import fake_config, fake_state
from tests.harness import CLOUD_KEY, CLOUD_MODEL, LOCAL_MODEL

WEATHER_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}},
    {"type": "function", "function": {"name": "calculate", "parameters": {
        "type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}}},
]  # fmt: skip
UNIT = {"eval_type": "unit_test", "language": "python"}

# (case, the scripted answer, passes?) for every grader; "[gNN]" makes each prompt unique.
CASES: list[tuple[dict[str, Any], dict[str, Any], bool]] = [
    ({"id": "g.coding.easy.01", "category": "coding", "difficulty": "easy", "evaluator": "programmatic",
      "expected": "assert add(2, 3) == 5", "metadata": UNIT},
     {"text": "Here:\n```python\ndef add(a, b):\n    return a + b\n```"}, True),
    ({"id": "g.coding.hard.01", "category": "coding", "difficulty": "hard", "evaluator": "programmatic",
      "expected": "assert add(2, 3) == 5", "metadata": UNIT},
     {"text": "```python\ndef add(a, b):\n    return a - b\n```"}, False),
    ({"id": "g.coding.hard.02", "category": "coding", "difficulty": "hard", "evaluator": "programmatic",
      "expected": "assert double(4) == 8", "metadata": UNIT},
     {"text": "```python\ndef double(x):\n    return 2 * x\n```"}, True),
    ({"id": "g.math.easy.01", "category": "math", "difficulty": "easy", "evaluator": "regex_match",
      "expected": "\\\\boxed\\{\\s*42\\s*\\}"}, {"text": "So the answer is \\boxed{42}."}, True),
    ({"id": "g.math.hard.01", "category": "math", "difficulty": "hard", "evaluator": "regex_match",
      "expected": "\\\\boxed\\{\\s*7\\s*\\}"}, {"text": "\\boxed{6}"}, False),
    ({"id": "g.math.hard.02", "category": "math", "difficulty": "hard", "evaluator": "regex_match",
      "expected": "\\\\boxed\\{\\s*Ada\\s*\\}", "metadata": {"must_not_match": ["\\\\boxed\\{\\s*Bo\\s*\\}"]}},
     {"text": "\\boxed{Ada} or maybe \\boxed{Bo}"}, False),
    ({"id": "g.instruction.easy.01", "category": "instruction", "difficulty": "easy", "evaluator": "text_match",
      "expected": "amber lantern seven is lit"}, {"text": "  Amber lantern seven is lit\n"}, True),
    ({"id": "g.instruction.easy.02", "category": "instruction", "difficulty": "easy", "evaluator": "text_match",
      "expected": "vex nine falcon"}, {"text": "falcon nine vex"}, False),
    ({"id": "g.instruction.hard.01", "category": "instruction", "difficulty": "hard", "evaluator": "structural_count",
      "expected": 3, "metadata": {"unit": "line", "op": "=="}}, {"text": "one lantern\ntwo lantern\n\nthree lantern"}, True),
    ({"id": "g.instruction.hard.02", "category": "instruction", "difficulty": "hard", "evaluator": "structural_count",
      "expected": 2, "metadata": {"unit": "sentence", "op": "=="}}, {"text": "It rains. It pours. It stops."}, False),
    ({"id": "g.prose.expert.01", "category": "prose", "difficulty": "expert", "evaluator": "structural_count",
      "expected": 2, "metadata": {"unit": "stanza", "op": "=="}}, {"text": "a\nb\n\nc\nd"}, True),
    ({"id": "writing_summary_g", "category": "writing", "evaluator": "text_contains",
      "expected_keywords": ["harbor", "dusk", "lantern"], "min_matches": 2},
     {"text": "A harbor at dusk, quiet."}, True),
    ({"id": "writing_story_g", "category": "writing", "evaluator": "text_contains",
      "expected_keywords": ["robot", "art", "dialogue"], "min_matches": 2}, {"text": "A cat sleeps."}, False),
    ({"id": "tool_weather_g", "category": "tool_calling", "evaluator": "tool_call",
      "expected": {"tool": "get_weather", "args_contains": {"location": "Oslo"}}, "metadata": {"tools": WEATHER_TOOLS}},
     {"tool_call": {"name": "get_weather", "arguments": '{"location": "Oslo"}'}}, True),
    ({"id": "tool_calc_g", "category": "tool_calling", "evaluator": "tool_call",
      "expected": {"tool": "calculate", "args_contains": {"expression": "45 * 73"}}, "metadata": {"tools": WEATHER_TOOLS}},
     {"tool_call": {"name": "get_weather", "arguments": '{"location": "45 * 73"}'}}, False),
]  # fmt: skip


def write_suites(folder: Path) -> list[Path]:
    """The cases in smf-bench's two layouts: tier0-style YAML documents, and lists."""
    folder.mkdir(parents=True, exist_ok=True)
    by_file: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for n, (case, _, _) in enumerate(CASES):
        full = {"name": case["id"], "prompt": f"[g{n:02d}] answer the case {case['id']}", "max_tokens": 256,
                "temperature": 0.3, **case}  # fmt: skip
        by_file[case["category"]].append(full)
    paths = []
    for category, cases in by_file.items():
        path = folder / f"{category}.yaml"
        if category in ("writing", "tool_calling"):
            path.write_text(yaml.safe_dump(cases, sort_keys=False))
        else:
            path.write_text("# tier0-style\n" + yaml.safe_dump_all(cases, sort_keys=False))
        paths.append(path)
    return paths


def scripts() -> list[dict[str, Any]]:
    return [{"prompt": f"[g{n:02d}]", **answer} for n, (_, answer, _) in enumerate(CASES)]


@pytest.fixture
def fakes() -> Iterator[tuple[RunningFake, RunningFake]]:
    local = start_in_thread("vllm", model=LOCAL_MODEL)
    cloud = start_in_thread("cloud", api_key=CLOUD_KEY, model=CLOUD_MODEL)
    yield local, cloud
    local.stop()
    cloud.stop()


def write_config(tmp_path: Path, local: RunningFake, cloud: RunningFake, **extra: Any) -> Path:
    backends = simulated_backends(local.url, cloud.url, CLOUD_KEY)
    backends["local-thinking"] = {
        "variant_of": "local",
        "extra_body": {"chat_template_kwargs": {"enable_thinking": True}},
    }
    raw = {
        "database": {"url": f"sqlite:///{tmp_path}/offload.db", "spool_path": str(tmp_path / "spool.jsonl")},
        "auth": {"keys": [{"name": "agents", "key": "sk-agents-0123456789"}],
                 "admin_keys": [{"name": "admin", "key": "sk-admin-0123456789"}]},
        "backends": backends,
        "routing": {"default": "local", "fallbacks": {"local": ["cloud"]}},
        "health": {"interval_s": 0.2},
        **extra,
    }  # fmt: skip
    path = tmp_path / "router.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def show_tallies(found: store.Evidence) -> dict[str, Any]:
    from router.gate.stats import tally

    return {category: tally(results) for category, results in found.results.items()}


def by_evaluator(results: list[Result]) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = {}
    for r in results:
        tally = out.setdefault(r.evaluator, [0, 0])
        tally[0] += r.status == "pass"
        tally[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_scripted_run_reproduces_the_scripted_pass_rates_per_grader(
    tmp_path: Path, fakes: tuple[RunningFake, RunningFake], stream: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    local, cloud = fakes
    fake_config(local, scripts=scripts())
    config_file = write_config(tmp_path, local, cloud)
    args = [
        "gate",
        "run",
        "--config",
        str(config_file),
        "--backend",
        "local",
        "--allow-code",
        "--concurrency",
        "3",
    ]
    args += ["--suite", *map(str, write_suites(tmp_path / "suites")), *(["--stream"] if stream else [])]
    assert main(args) == 0
    printed = capsys.readouterr()
    assert "completion tokens ($0.00 at local's price)" in printed.out  # the box bills nothing
    assert f"{len(CASES)}/{len(CASES)} [" in printed.err  # the progress bar reached the end

    config = load_config(config_file)
    found = store.evidence(config.database.url)
    assert list(found) == ["local"]
    results = found["local"].all_results()
    expected: dict[str, list[int]] = {}
    for case, _, passes in CASES:
        tally = expected.setdefault(case["evaluator"], [0, 0])
        tally[0] += passes
        tally[1] += 1
    assert by_evaluator(results) == {k: (v[0], v[1]) for k, v in expected.items()}
    assert {r.case_id for r in results if r.status == "pass"} == {c["id"] for c, _, ok in CASES if ok}
    per_category = collections.Counter(c["category"] for c, _, ok in CASES if ok)
    assert {c: v.passed for c, v in show_tallies(found["local"]).items()} == {
        c: per_category.get(c, 0) for c in {case["category"] for case, _, _ in CASES}
    }
    assert not [r for r in results if r.status == "error"]

    # Every request went to the local box as itself, with its model and extra body.
    received = [r["body"] for r in fake_state(local)["received"] if r["path"] == "/v1/chat/completions"]
    assert len(received) == len(CASES)
    assert {b["model"] for b in received} == {LOCAL_MODEL}
    assert all(b["chat_template_kwargs"] == {"enable_thinking": False} for b in received)
    assert all(bool(b.get("stream")) == stream for b in received)
    assert fake_state(cloud)["received"] == []

    # Marked on its usage rows, and not the month's traffic.
    run = store.runs(config.database.url)[0]
    engine = db.make_engine(config.database.url, pooled=False)
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(usage_table.c.gate_run, usage_table.c.client, usage_table.c.backend)
        ).all()
    engine.dispose()
    assert sorted(set(rows)) == [(run.id, "offload-gate", "local")] and len(rows) == len(CASES)
    month = datetime.now(UTC).strftime("%Y-%m")
    month_report = report.build_report(config, month)
    assert month_report["requests"] == 0 and month_report["empty"]
    assert run.recipe_hash == fingerprint(config, "local") and run.route == "local"


def test_an_arm_is_run_with_its_own_settings_and_stored_as_itself(
    tmp_path: Path, fakes: tuple[RunningFake, RunningFake]
) -> None:
    local, cloud = fakes
    fake_config(local, scripts=scripts())
    config_file = write_config(tmp_path, local, cloud)
    suites = write_suites(tmp_path / "suites")
    math = [str(p) for p in suites if p.stem == "math"]
    assert main(["gate", "run", "--config", str(config_file), "--backend", "local", "--arm", "local-thinking",
                 "--suite", *math]) == 0  # fmt: skip
    received = [r["body"] for r in fake_state(local)["received"] if r["path"] == "/v1/chat/completions"]
    assert [b["chat_template_kwargs"] for b in received] == [{"enable_thinking": True}] * 3
    config = load_config(config_file)
    run = store.runs(config.database.url)[0]
    assert (run.target, run.backend, run.route) == ("local-thinking", "local", "local")
    assert run.recipe_hash != fingerprint(config, "local")  # thinking on is another recipe


def test_a_fallback_answer_is_an_error_not_evidence(
    tmp_path: Path, fakes: tuple[RunningFake, RunningFake]
) -> None:
    local, cloud = fakes
    fake_config(local, fail_status=503)
    config_file = write_config(tmp_path, local, cloud)
    math = [str(p) for p in write_suites(tmp_path / "suites") if p.stem == "math"]
    assert main(["gate", "run", "--config", str(config_file), "--backend", "local", "--suite", *math]) == 0
    results = store.evidence(load_config(config_file).database.url)["local"].all_results()
    assert {r.status for r in results} == {"error"}
    assert all("not local" in r.detail or "HTTP" in r.detail for r in results)


def test_code_cases_need_allow_code(
    tmp_path: Path, fakes: tuple[RunningFake, RunningFake], capsys: pytest.CaptureFixture[str]
) -> None:
    local, cloud = fakes
    config_file = write_config(tmp_path, local, cloud)
    suites = [str(p) for p in write_suites(tmp_path / "suites")]
    assert main(["gate", "run", "--config", str(config_file), "--backend", "local", "--suite", *suites]) == 2
    assert "--allow-code" in capsys.readouterr().err
    assert fake_state(local)["received"] == []  # nothing was sent


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--backend", "nope"], "no such backend"),
        (["--backend", "cloud", "--arm", "local-thinking"], "not a variant of 'cloud'"),
    ],
)
def test_a_bad_target_is_refused_by_name(
    tmp_path: Path,
    fakes: tuple[RunningFake, RunningFake],
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    config_file = write_config(tmp_path, *fakes)
    suites = [str(p) for p in write_suites(tmp_path / "suites")]
    assert main(["gate", "run", "--config", str(config_file), *args, "--suite", *suites]) == 2
    assert message in capsys.readouterr().err


def test_a_bad_case_file_is_refused_naming_the_case(
    tmp_path: Path, fakes: tuple[RunningFake, RunningFake], capsys: pytest.CaptureFixture[str]
) -> None:
    config_file = write_config(tmp_path, *fakes)
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x1\ncategory: math\nprompt: hi\nevaluator: regex_match\n")
    assert main(["gate", "run", "--config", str(config_file), "--backend", "local", "--suite", str(bad)]) == 2
    assert "x1" in (err := capsys.readouterr().err) and "expected" in err


def test_only_an_admin_key_may_mark_gate_traffic(
    tmp_path: Path, fakes: tuple[RunningFake, RunningFake]
) -> None:
    from router.app import create_app

    config = load_config(write_config(tmp_path, *fakes))
    app = create_app(config, classifier=None)
    transport = httpx.ASGITransport(app=app)
    body = {"model": "auto", "messages": [{"role": "user", "content": "hi"}]}

    async def call(key: str) -> httpx.Response:
        async with (
            app.app.router.lifespan_context(app.app),
            httpx.AsyncClient(transport=transport, base_url="http://proxy") as client,
        ):
            headers = {"authorization": f"Bearer {key}", "x-offload-gate": "run1"}
            return await client.post("/v1/chat/completions", json=body, headers=headers)

    import asyncio

    async def both() -> tuple[httpx.Response, httpx.Response]:
        return await call("sk-agents-0123456789"), await call("sk-admin-0123456789")

    refused, allowed = asyncio.run(both())
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "admin_required"
    assert allowed.status_code == 200


# ------------------------------------------------------------------ stage-1 import

# The article's Official A run of Laguna S 2.1 (thinking off): passes per suite, and per
# difficulty of the 150 tier-0 cases; our allocation of those passes to suite x difficulty.
LADDER = {"easy": 2, "medium": 3, "hard": 5, "expert": 8, "frontier": 12}
PASSES = {
    "coding": {"easy": 2, "medium": 3, "hard": 5, "expert": 6, "frontier": 8},  # 24/30
    "instruction": {"easy": 2, "medium": 3, "hard": 5, "expert": 8, "frontier": 9},  # 27/30
    "prose": {"easy": 2, "medium": 3, "hard": 4, "expert": 6, "frontier": 8},  # 23/30
    "reasoning": {"easy": 2, "medium": 3, "hard": 3, "expert": 4, "frontier": 8},  # 20/30
    "math": {"easy": 2, "medium": 2, "hard": 1, "expert": 2, "frontier": 1},  # 8/30
}


def official_a(path: Path) -> Path:
    tests: list[dict[str, Any]] = []
    for suite, passes in PASSES.items():
        for level, size in LADDER.items():
            for n in range(size):
                ok = n < passes[level]
                tests.append({"test_id": f"v3.{suite}.{level}.{n + 1:02d}", "category": suite, "suite": suite,
                              "status": "pass" if ok else "fail", "passed": ok, "score": float(ok), "detail": "",
                              "elapsed": 1.0, "tokens_used": 100, "evaluator": "regex_match"})  # fmt: skip
    for name, ok in (("tool_call_weather", True), ("tool_call_calculator", True)):
        tests.append(
            {
                "test_id": name,
                "category": "tool_calling",
                "status": "pass" if ok else "fail",
                "evaluator": "tool_call",
            }
        )
    for n in range(5):
        tests.append(
            {
                "test_id": f"writing_{n}",
                "category": "writing",
                "status": "pass" if n < 3 else "fail",
                "evaluator": "text_contains",
            }
        )
    data = {"tag": "cal-laguna-s-2.1-nvfp4-strict-v01", "model": LOCAL_MODEL, "timestamp": "20260706_220747",
            "wall_time_seconds": 1920.0, "summary": {"total": 157, "passed": 107}, "tests": tests}  # fmt: skip
    path.write_bytes(orjson.dumps(data))
    return path


ARTICLE_MAP = {"coding": "local", "tools": "local", "instruction": "local",
               "math": "cloud", "reasoning": "cloud", "writing": "cloud"}  # fmt: skip


def test_an_official_a_import_proposes_the_articles_map_and_shows_its_tables(
    tmp_path: Path, fakes: tuple[RunningFake, RunningFake], capsys: pytest.CaptureFixture[str]
) -> None:
    everything_local = {"routing": {"default": "local", "fallbacks": {"local": ["cloud"]},
                                    "intents": dict.fromkeys(ARTICLE_MAP, "local")}}  # fmt: skip
    config_file = write_config(tmp_path, *fakes, **everything_local)
    stage1 = official_a(tmp_path / "stage1_laguna.json")
    assert main(["gate", "import", str(stage1), "--backend", "local", "--config", str(config_file)]) == 0
    assert main(["gate", "import", str(stage1), "--backend", "local", "--config", str(config_file)]) == 2
    assert "already imported" in capsys.readouterr().err

    assert main(["gate", "propose", "--format", "json", "--config", str(config_file)]) == 0
    proposed = orjson.loads(capsys.readouterr().out)
    assert proposed["intents"] == ARTICLE_MAP
    assert proposed["evidence"]["writing"]["targets"]["local"]["passed"] == 26  # prose 23 + writing 3 of 35
    for line in ("-math: local", "+math: cloud", "-writing: local", "+writing: cloud", "-reasoning: local"):
        assert line in proposed["diff"]
    assert "-coding" not in proposed["diff"] and "+coding" not in proposed["diff"]
    assert proposed["stale"] == []

    assert main(["gate", "show", "--config", str(config_file)]) == 0
    table = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    for row in (
        "coding 24 6 0 80% [63%-90%]",
        "instruction 27 3 0 90% [74%-97%]",
        "tool_calling 2 0 0 100% [34%-100%]",
        "prose 23 7 0 77% [59%-88%]",
        "reasoning 20 10 0 67% [49%-81%]",
        "writing 3 2 0 60% [23%-88%]",
        "math 8 22 0 27% [14%-44%]",
        "all 107 50 0 68% [61%-75%]",
        "easy 10/10 100% [72%-100%]",
        "medium 14/15 93% [70%-99%]",
        "hard 18/25 72% [52%-86%]",
        "expert 26/40 65% [50%-78%]",
        "frontier 34/60 57% [44%-68%]",
    ):
        assert row in table, row
    assert "local: 0 errors (0 timeouts) of 157 cases" in table


def evidence_run(
    target: str, route: str, recipe: str, passes: dict[str, tuple[int, int]]
) -> tuple[Run, list[Result]]:
    run = Run(id=f"run-{target}", started_at=datetime(2026, 11, 30, tzinfo=UTC), source="run", target=target,
              backend=target.split("-")[0], route=route, model="m", recipe_hash=recipe)  # fmt: skip
    results = [
        Result(
            f"{category}.{n}", category, None, "regex_match", "pass" if n < ok else "fail", float(n < ok), ""
        )
        for category, (ok, total) in passes.items()
        for n in range(total)
    ]
    return run, results


def test_an_arm_can_win_an_intent_and_the_cloud_margin_decides(
    tmp_path: Path, fakes: tuple[RunningFake, RunningFake]
) -> None:
    config = load_config(write_config(tmp_path, *fakes))
    url = config.database.url
    runs = [
        evidence_run("local", "local", fingerprint(config, "local"),
                     {"coding": (20, 30), "instruction": (27, 30), "math": (8, 30), "tool_calling": (2, 2)}),
        evidence_run("local-thinking", "local", fingerprint(config, "local-thinking"),
                     {"coding": (27, 30), "instruction": (27, 30), "math": (12, 30)}),
        evidence_run("cloud", "cloud", "an-old-hash", {"coding": (28, 30), "instruction": (30, 30), "math": (26, 30)}),
    ]  # fmt: skip
    for run, results in runs:
        store.save(url, run, results)
    proposal = propose.propose(config, store.evidence(url))
    lines = {line.intent: line for line in proposal.lines}
    assert lines["coding"].proposed == "local-thinking"  # 90 % against the cloud's 93 %
    assert lines["instruction"].proposed == "local"  # 90 % = 100 % - 10 points; the plain backend on a tie
    assert (lines["math"].proposed, lines["math"].reason) == ("cloud", "below_floor")
    assert (lines["tools"].proposed, lines["tools"].reason) == ("local", "local_meets_floor")
    assert (lines["writing"].proposed, lines["writing"].reason) == ("cloud", "no_evidence")
    assert proposal.stale == [
        "cloud: its recipe or model changed after run run-cloud (2026-11-30 00:00 UTC): run the gate again"
    ]
    text = show.render(config, store.evidence(url))
    assert text.index("local-thinking") < text.index("cloud (cloud)")  # local, its arm, then the cloud
    assert "STALE" in text


async def test_the_console_gate_page_shows_runs_the_proposal_and_a_stale_recipe(tmp_path: Path) -> None:
    from tests.test_console import BASE, console_client, login, row, seed
    from tests.test_console import make_config as console_config

    config = console_config(f"sqlite:///{tmp_path}/usage.db")
    url = config.database.url
    seed(url, [row(1), row(2, request_id="req-gate", gate_run="run-local")])
    async with console_client(config) as client:
        await login(client)
        empty = await client.get(f"{BASE}/gate")
        assert empty.status_code == 200 and "No gate runs yet" in empty.text
        fresh = evidence_run(
            "local", "local", fingerprint(config, "local"), {"coding": (24, 30), "math": (8, 30)}
        )
        store.save(url, *fresh)
        page = (await client.get(f"{BASE}/gate")).text
        assert 'data-intent="coding" data-proposed="local"' in page
        assert 'data-intent="math" data-proposed="cloud"' in page
        assert 'data-run="run-local"' in page and "80.0%" in page
        assert "Stale evidence" not in page
        store.save(url, *evidence_run("cloud", "cloud", "recipe-before-the-change", {"math": (25, 30)}))
        page = (await client.get(f"{BASE}/gate")).text
        assert 'data-stale="1"' in page and "cloud: its recipe or model changed after run run-cloud" in page
        decisions = (await client.get(f"{BASE}/decisions")).text
        assert decisions.count("offload gate run run-local") == 1  # its request, tagged
    assert report.build_report(config, "2026-10")["requests"] == 1  # the gate's request is not traffic


def test_a_recipe_change_makes_the_evidence_stale(
    tmp_path: Path, fakes: tuple[RunningFake, RunningFake]
) -> None:
    recipe = Path(__file__).resolve().parent.parent / "config" / "laguna-spark.yaml"
    (tmp_path / "laguna-spark.yaml").write_text(recipe.read_text())
    config_file = write_config(tmp_path, *fakes)
    raw = yaml.safe_load(config_file.read_text())
    raw["backends"]["local"].update(recipe="laguna-spark.yaml")
    for key in ("max_concurrency", "context_window"):
        raw["backends"]["local"].pop(key)
    config_file.write_text(yaml.safe_dump(raw))
    stage1 = official_a(tmp_path / "stage1.json")
    assert main(["gate", "import", str(stage1), "--backend", "local", "--config", str(config_file)]) == 0
    config = load_config(config_file)
    assert propose.propose(config, store.evidence(config.database.url)).stale == []

    changed = (
        (tmp_path / "laguna-spark.yaml")
        .read_text()
        .replace("gpu-memory-utilization: 0.82", "gpu-memory-utilization: 0.9")
    )
    (tmp_path / "laguna-spark.yaml").write_text(changed)
    config = load_config(config_file)
    stale = propose.propose(config, store.evidence(config.database.url)).stale
    assert len(stale) == 1 and stale[0].startswith("local: its recipe or model changed after run")
    assert "STALE" in show.render(config, store.evidence(config.database.url))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not json", "not JSON"),
        (b'{"tests": []}', "no tests[]"),
        (
            b'{"tests": [{"test_id": "a", "category": "math", "status": "maybe"}]}',
            "status must be pass, fail or error",
        ),
        (
            b'{"tests": [{"test_id": "a", "category": "math", "status": "pass"}, {"test_id": "a", "category": "math", "status": "fail"}]}',
            "twice",
        ),
    ],
)
def test_a_file_that_is_not_a_stage1_result_is_refused(
    tmp_path: Path,
    fakes: tuple[RunningFake, RunningFake],
    capsys: pytest.CaptureFixture[str],
    content: bytes,
    message: str,
) -> None:
    config_file = write_config(tmp_path, *fakes)
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    assert main(["gate", "import", str(bad), "--backend", "local", "--config", str(config_file)]) == 2
    assert message in capsys.readouterr().err
    assert store.runs(load_config(config_file).database.url) == []


def test_gate_config_is_checked_at_start_up() -> None:
    from router.config import ConfigError, parse_config

    backends = {"local": {"kind": "vllm", "base_url": "http://127.0.0.1:1/v1", "model": "m"}}
    for gate, key in (
        ({"categories": {"prose": "poetry"}}, "gate.categories"),
        ({"floors": {"math": 2}}, "gate.floors"),
    ):
        with pytest.raises(ConfigError, match=key):
            parse_config({"backends": backends, "gate": gate}, env={})
    assert parse_config({"backends": backends}, env={}).gate.categories["prose"] == "writing"


def test_gate_prompts_never_become_training_data(
    tmp_path: Path, fakes: tuple[RunningFake, RunningFake], capsys: pytest.CaptureFixture[str]
) -> None:
    local, cloud = fakes
    fake_config(local, scripts=scripts())
    config_file = write_config(tmp_path, local, cloud)
    raw = yaml.safe_load(config_file.read_text())
    raw["database"]["store_text"] = True
    config_file.write_text(yaml.safe_dump(raw))
    math = [str(p) for p in write_suites(tmp_path / "suites") if p.stem == "math"]
    assert main(["gate", "run", "--config", str(config_file), "--backend", "local", "--suite", *math]) == 0
    out = tmp_path / "export.jsonl"
    month = datetime.now(UTC).strftime("%Y-%m")
    main(["export", "--config", str(config_file), "--month", month, "--select", "all", "--out", str(out)])
    assert "[g0" not in (out.read_text() if out.exists() else "")
    engine = db.make_engine(load_config(config_file).database.url, pooled=False)
    with engine.connect() as conn:
        stored = conn.execute(sa.select(usage_table.c.prompt_text)).scalars().all()
    engine.dispose()
    assert len(stored) == 3 and all("[g0" in text for text in stored)  # stored, but not exported


def test_cases_the_gate_does_not_grade_are_counted_and_left_out(
    tmp_path: Path, fakes: tuple[RunningFake, RunningFake], capsys: pytest.CaptureFixture[str]
) -> None:
    local, cloud = fakes
    fake_config(local, scripts=scripts())
    config_file = write_config(tmp_path, local, cloud)
    folder = tmp_path / "suites"
    math = next(p for p in write_suites(folder) if p.stem == "math")
    agentic = tmp_path / "agentic" / "agentic.yaml"
    agentic.parent.mkdir()
    agentic.write_text(yaml.safe_dump([{"id": "av2-01", "category": "agentic", "prompt": "write a file",
                                        "evaluator": "agentic_file_check"}]))  # fmt: skip
    assert main(["gate", "run", "--config", str(config_file), "--backend", "local",
                 "--suite", str(math), str(agentic.parent)]) == 0  # fmt: skip
    assert "skipped cases the gate does not grade: 1 agentic_file_check" in capsys.readouterr().err
    assert len(store.evidence(load_config(config_file).database.url)["local"].all_results()) == 3
