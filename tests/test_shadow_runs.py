"""Arms, weighted splits and idle shadow runs (issue: spend idle capacity on evidence)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from classifier import IntentModel
from router.config import load_config, parse_config
from router.decide.policy import Policy
from router.fake.upstream import RunningFake
from router.ledger.writer import UsageRecorder
from router.ops.cli import main as offload
from router.shadow.agreement import judge
from tests.conftest import fake_config, fake_state
from tests.harness import CLOUD_KEY, CLOUD_MODEL, LOCAL_MODEL, ProxyServer, wait_until

MATHS = "Evaluate the integral of x^3 * e^(-x^2) from 0 to infinity and give the exact value."
CODING = "Write a Python function that parses ISO 8601 dates and add a unit test for it."


def raw_config(local: RunningFake, cloud: RunningFake, **routing: Any) -> dict[str, Any]:
    return {
        "database": {"enabled": False},
        "backends": {
            "local": {
                "kind": "vllm",
                "base_url": local.url,
                "model": LOCAL_MODEL,
                "max_concurrency": 32,
                "extra_body": {"chat_template_kwargs": {"enable_thinking": False}},
            },
            "local-thinking": {"variant_of": "local", "thinking": "on", "max_output_tokens": 16384},
            "cloud": {
                "kind": "openai",
                "base_url": cloud.url,
                "model": CLOUD_MODEL,
                "api_key": CLOUD_KEY,
                "price": {"input_per_mtok": 1.25, "output_per_mtok": 10.0},
            },
        },
        "routing": {
            "fallbacks": {"local": ["cloud"]},
            "shadow_runs": {"intents": {"math": {"arm": "local-thinking", "rate": 1.0}}, "reserve_slots": 8},
            **routing,
        },
        "health": {"interval_s": 0.2, "open_s": 0.5, "failure_threshold": 2},
    }


def chat(proxy: ProxyServer, text: str, **headers: str) -> httpx.Response:
    return proxy.post(
        "/v1/chat/completions",
        json={"model": "auto", "messages": [{"role": "user", "content": text}]},
        headers=headers,
    )


def run(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert offload(list(args)) == 0
    return out.getvalue()


# ------------------------------------------------------------------ the judge


@pytest.mark.parametrize(
    "intent, real, local, verdict",
    [
        ("math", "so the integral is \\boxed{\\frac{1}{2}}", "It equals \\boxed{\\frac{1}{2}}.", "agree"),
        ("math", "The answer is 0.5", "which gives 1/2", "agree"),
        ("math", "The answer is \\boxed{42}", "The answer is \\boxed{41}", "disagree"),
        ("math", "The answer is 1,000", "so 1000.", "agree"),
        ("math", "no number here", "none either", "not_judged"),
        (
            "tools",
            'tool_call: shell({"cmd": "ls", "n": 1})',
            'tool_call: shell({"n": 1, "cmd": "ls"})',
            "agree",
        ),
        ("tools", 'tool_call: shell({"cmd": "ls"})', 'tool_call: shell({"cmd": "pwd"})', "disagree"),
        ("instruction", '{"name": "Ada", "year": 1843}', '{"year": 1843, "name": "Ada"}', "agree"),
        ("instruction", '{"name": "Ada"}', '{"name": "Bob"}', "disagree"),
        ("writing", "A warm launch post.", "Another launch post.", "not_judged"),
        ("math", None, "\\boxed{1}", "not_judged"),
    ],
)
def test_agreement_is_judged_only_where_a_machine_can(intent, real, local, verdict):
    assert judge(intent, real, local) == verdict


# ------------------------------------------------------------------ weighted splits


def test_weighted_splits_land_within_bounds_and_stick_to_a_conversation(local_fake, cloud_fake):
    raw = raw_config(local_fake, cloud_fake, intents={"math": {"cloud": 90, "local-thinking": 10}})
    policy = Policy(parse_config(raw, env={}), IntentModel.load())
    n, local = 2000, 0
    for i in range(n):
        body = {"messages": [{"role": "user", "content": f"{MATHS} (case {i})"}]}
        first = policy.decide(body, {}, 200)
        assert first.intent == "math" and first.backend in ("cloud", "local-thinking")
        local += first.backend == "local-thinking"
        if i % 50 == 0:  # later turns of the same conversation keep its arm
            follow = {"messages": [*body["messages"], {"role": "assistant", "content": "Let me see."},
                                   {"role": "user", "content": "Now do it for x^5 instead."}]}  # fmt: skip
            later = policy.decide(follow, {}, 300)
            assert later.intent != "math" or later.backend == first.backend
    # Binomial(2000, 0.1): mean 200, sd 13.4; four sd either way.
    assert 146 <= local <= 254, local
    # A session header identifies the conversation whatever its text says.
    arms = {
        policy.decide(
            {"messages": [{"role": "user", "content": f"{MATHS} {i}"}]}, {"session-id": "s-1"}, 200
        ).backend
        for i in range(40)
    }
    assert len(arms) == 1


# ------------------------------------------------------------------ shadow runs


def test_shadow_pairs_are_stored_judged_and_compared(tmp_path: Path, db_url: str, local_fake, cloud_fake):
    raw = raw_config(local_fake, cloud_fake)
    raw["database"] = {
        "url": db_url,
        "store_text": True,
        "flush_interval_s": 0.1,
        "spool_path": str(tmp_path / "s.jsonl"),
    }
    config_path = tmp_path / "router.yaml"
    config_path.write_bytes(orjson.dumps(raw))
    run("db", "upgrade", "--config", str(config_path))
    config = load_config(config_path)
    answer = ["The", " answer", " is", " \\boxed{42}", "."]
    fake_config(cloud_fake, reply_tokens=answer)
    fake_config(local_fake, reply_tokens=answer, chat_always_calls=False)
    proxy = ProxyServer(config, classifier=IntentModel.load(), recorder=UsageRecorder(config.database))
    try:
        responses = [chat(proxy, f"{MATHS} Case {i}.") for i in range(3)]
        wait_until(
            lambda: sum(r["path"] == "/v1/chat/completions" for r in fake_state(local_fake)["received"]) == 3
        )
        fake_config(local_fake, reply_tokens=["So", " \\boxed{41}"])  # the box gets one wrong
        responses.append(chat(proxy, f"{MATHS} Case 3."))
        responses.append(chat(proxy, CODING))  # local work: nothing to shadow
        assert [r.headers["x-offload-route"] for r in responses] == ["cloud"] * 4 + ["local"]
        assert all(r.json()["choices"][0]["message"]["content"] == "".join(answer) for r in responses[:4])
        assert wait_until(lambda: proxy.state.recorder.rows_written >= 9, timeout=15)
    finally:
        proxy.stop()
    copies = [
        r for r in fake_state(local_fake)["received"] if "enable_thinking" in orjson.dumps(r["body"]).decode()
    ]
    sent = [r["body"] for r in copies if r["body"]["chat_template_kwargs"]["enable_thinking"]]
    assert len(sent) == 4 and all("stream" not in b and b["max_tokens"] == 8192 for b in sent)

    month = datetime.now(UTC).strftime("%Y-%m")
    result = orjson.loads(run("compare", "--config", str(config_path), "--month", month, "--format", "json"))
    (line,) = result["by_intent_and_arm"]
    assert (line["intent"], line["arm"], line["pairs"]) == ("math", "local-thinking", 4)
    assert line["agreement"] == {"agree": 3, "disagree": 1, "not_judged": 0, "rate": 0.75}
    assert line["local"]["errors"] == line["cloud"]["errors"] == 0
    assert line["local"]["completion_tokens"] > 0 and line["cloud_spend_on_intent"] > 0
    table = run("compare", "--config", str(config_path), "--month", month, "--intent", "math")
    assert "local-thinking" in table and "75%" in table
    exported = tmp_path / "pairs.jsonl"
    run("export", "--config", str(config_path), "--month", month, "--select", "pairs", "--out", str(exported))
    graded = [orjson.loads(line) for line in exported.read_bytes().splitlines()]
    assert sorted(p["agreement"] for p in graded) == ["agree", "agree", "agree", "disagree"]
    wrong = next(p for p in graded if p["agreement"] == "disagree")
    assert "\\boxed{42}" in wrong["cloud_answer"] and "\\boxed{41}" in wrong["local_answer"]
    assert wrong["intent"] == "math" and wrong["request"]["messages"][-1]["role"] == "user"
    report = orjson.loads(run("report", "--config", str(config_path), "--month", month, "--format", "json"))
    assert report["requests"] == 5  # the month's traffic: shadow runs are evidence, not traffic


def _peak_in_flight(proxy: ProxyServer, stop: threading.Event, peak: list[int]) -> None:
    backend = proxy.state.pool.backends["local"]
    while not stop.is_set():
        peak[0] = max(peak[0], backend.in_flight)
        time.sleep(0.002)


def test_shadow_work_yields_to_real_traffic_and_never_overfills_the_box(local_fake, cloud_fake):
    raw = raw_config(local_fake, cloud_fake)
    raw["backends"]["local"]["max_concurrency"] = 4
    raw["routing"]["shadow_runs"]["reserve_slots"] = 1
    proxy = ProxyServer(parse_config(raw, env={}), classifier=IntentModel.load())
    stop, peak = threading.Event(), [0]
    watcher = threading.Thread(target=_peak_in_flight, args=(proxy, stop, peak), daemon=True)
    watcher.start()
    try:
        fake_config(local_fake, first_byte_delay=1.0)  # the box is slow: shadow copies hold their slots

        async def scenario() -> list[httpx.Response]:
            async with httpx.AsyncClient(base_url=proxy.base_url, timeout=30) as client:
                body = {"model": "auto", "messages": [{"role": "user", "content": MATHS}]}
                maths = await asyncio.gather(*(client.post("/chat/completions", json=body) for _ in range(3)))
                assert all(r.headers["x-offload-route"] == "cloud" for r in maths)
                await asyncio.sleep(0.2)
                shadows = proxy.state.pool.backends["local"].server.shadows
                assert len([t for t in shadows if not t.done()]) == 3  # 4 slots, 1 kept free: 3 copies
                real = {"model": "local", "messages": [{"role": "user", "content": CODING}]}
                return await asyncio.gather(*(client.post("/chat/completions", json=real) for _ in range(4)))

        served = asyncio.run(scenario())
        # Real traffic took every slot it needed at once: no spill to the cloud, no queue.
        assert [(r.headers["x-offload-route"], r.headers["x-offload-fallback"]) for r in served] == [
            ("local", "0")
        ] * 4
        assert wait_until(lambda: proxy.state.pool.backends["local"].in_flight == 0, timeout=10)
        assert peak[0] <= 4
        shadow_rows = [r for r in proxy.state.recorder.rows if r.shadow_of is not None]
        assert [r.error_type for r in shadow_rows].count("shadow_yielded") == 3
        assert all(r.client is None and r.arm == "local-thinking" for r in shadow_rows)
        metrics = proxy.get("/metrics").text
        assert 'offload_shadow_runs_total{arm="local-thinking",outcome="yielded"} 3.0' in metrics
    finally:
        stop.set()
        proxy.stop()


def test_shadow_runs_switch_off_at_once_and_respect_restricted_keys(local_fake, cloud_fake):
    raw = raw_config(local_fake, cloud_fake)
    raw["auth"] = {
        "keys": [{"name": "finance", "key": "sk-finance-0123456789", "routes": ["cloud"]}],
        "admin_keys": [{"name": "ops", "key": "sk-admin-0123456789"}],
    }
    proxy = ProxyServer(parse_config(raw, env={}), classifier=IntentModel.load())
    try:
        fake_config(local_fake, first_byte_delay=2.0)
        admin = {"Authorization": "Bearer sk-admin-0123456789"}
        assert chat(proxy, MATHS, **admin).headers["x-offload-route"] == "cloud"
        assert wait_until(
            lambda: any(not t.done() for t in proxy.state.pool.backends["local"].server.shadows)
        )
        off = proxy.post("/offload/state", json={"shadow_runs": False}, headers=admin)
        assert off.status_code == 200 and off.json() == {"shadow_runs": {"enabled": False}}
        assert wait_until(lambda: proxy.state.pool.backends["local"].in_flight == 0, timeout=5)  # cancelled
        chat(proxy, MATHS, **admin)
        assert proxy.get("/offload/state", headers=admin).json()["shadow_runs"] == {"enabled": False}
        assert proxy.post("/offload/state", json={"shadow_runs": "no"}, headers=admin).status_code == 400
        finance = {"Authorization": "Bearer sk-finance-0123456789"}
        assert proxy.post("/offload/state", json={"shadow_runs": True}, headers=finance).status_code == 403
        proxy.post("/offload/state", json={"shadow_runs": True}, headers=admin)
        chat(proxy, MATHS, **finance)  # a key kept to the cloud is never shadowed on the box
        time.sleep(0.3)
        rows = proxy.state.recorder.rows
        assert [r.error_type for r in rows if r.shadow_of is not None] == ["shadow_yielded"]
        assert not any(r.shadow_of == rows[-1].request_id for r in rows)
    finally:
        proxy.stop()
