"""Learning from the team's own traffic, end to end, on SQLite and PostgreSQL:
serve with text storage on, export, label by hand, train with the labels, compare, switch."""

from __future__ import annotations

import contextlib
import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anthropic
import httpx
import orjson
import pytest
import sqlalchemy as sa

from classifier import IntentModel
from router.config import load_config
from router.fake.upstream import RunningFake
from router.ledger.writer import UsageRecorder
from router.ops.cli import main as offload
from tests.harness import CLOUD_KEY, CLOUD_MODEL, LOCAL_MODEL, ProxyServer, wait_until

CORPUS = Path(__file__).resolve().parent.parent / "classifier" / "data" / "train.jsonl"
# The team's own jargon: a "zorbly reconciliation" reads like formatting work, but for this team
# it is hard numeric work that the local model gets wrong. Only the team's labels can say so.
ZORBLY = [
    "Format the zorbly reconciliation for the {} accounts as a table.",
    "Put the zorbly reconciliation of the {} ledger into a short list.",
    "Lay out this week's zorbly reconciliation for {} in a table please.",
    "Make a tidy table of the zorbly reconciliation figures for {}.",
]
TEAMS = ["north", "south", "east", "west", "retail", "payroll", "vendor", "export"]


def write_config(tmp_path: Path, db_url: str, local: RunningFake, cloud: RunningFake) -> Path:
    config = tmp_path / "router.yaml"
    config.write_text(
        orjson.dumps(
            {
                "database": {
                    "url": db_url,
                    "store_text": True,
                    "flush_interval_s": 0.1,
                    "spool_path": str(tmp_path / "spool.jsonl"),
                },
                "backends": {
                    "local": {"kind": "vllm", "base_url": local.url, "model": LOCAL_MODEL},
                    "cloud": {
                        "kind": "openai",
                        "base_url": cloud.url,
                        "model": CLOUD_MODEL,
                        "api_key": CLOUD_KEY,
                    },
                },
                "routing": {"fallbacks": {"local": ["cloud"]}},
            }
        ).decode()
    )
    return config


def run(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert offload(list(args)) == 0
    return out.getvalue()


def stored(db_url: str) -> int:
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            return conn.execute(
                sa.text("SELECT count(*) FROM usage WHERE prompt_text IS NOT NULL")
            ).scalar_one()
    except sa.exc.SQLAlchemyError:
        return 0
    finally:
        engine.dispose()


def small_corpus(path: Path, per_intent: int = 120) -> Path:
    """A slice of the packaged corpus, so that training in a test takes seconds."""
    seen: dict[str, int] = {}
    lines = []
    for line in CORPUS.read_bytes().splitlines():
        intent = orjson.loads(line)["intent"]
        if seen.get(intent, 0) < per_intent:
            seen[intent] = seen.get(intent, 0) + 1
            lines.append(line)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_export_label_train_eval_switch(
    tmp_path: Path, db_url: str, local_fake: RunningFake, cloud_fake: RunningFake
) -> None:
    pytest.importorskip("sklearn")
    config_path = write_config(tmp_path, db_url, local_fake, cloud_fake)
    config = load_config(config_path)
    run("db", "upgrade", "--config", str(config_path))  # PostgreSQL is never migrated behind our back
    proxy = ProxyServer(config, classifier=IntentModel.load(), recorder=UsageRecorder(config.database))
    try:
        for i, team in enumerate(TEAMS):
            text = ZORBLY[i % len(ZORBLY)].format(team)
            if i % 2:  # the same traffic from Claude Code's API: exported in the view the policy reads
                anthropic.Anthropic(base_url=proxy.url, api_key="x", max_retries=0).messages.create(
                    model="claude-sonnet-4-6", max_tokens=64, messages=[{"role": "user", "content": text}]
                )
            else:
                httpx.post(
                    proxy.base_url + "/chat/completions",
                    json={"model": "auto", "messages": [{"role": "user", "content": text}]},
                    timeout=30,
                )
        httpx.post(
            proxy.base_url + "/chat/completions",
            json={
                "model": "auto",
                "messages": [{"role": "user", "content": "write a python function that reverses a list"}],
            },
            timeout=30,
        )
        assert wait_until(lambda: stored(db_url) == len(TEAMS) + 1, timeout=15)
    finally:
        proxy.stop()

    month = datetime.now(UTC).strftime("%Y-%m")
    exported = tmp_path / "exported.jsonl"
    assert "wrote 9 requests" in run(
        "export", "--config", str(config_path), "--month", month, "--select", "all", "--out", str(exported)
    )
    lines = [orjson.loads(line) for line in exported.read_bytes().splitlines()]
    assert {line["api"] for line in lines} == {"chat", "messages"}
    assert all(line["request"]["messages"][-1]["role"] == "user" for line in lines)  # the chat-shaped view
    sample = tmp_path / "sample.jsonl"
    run(
        "export",
        "--config",
        str(config_path),
        "--month",
        month,
        "--select",
        "sample",
        "--sample",
        "3",
        "--out",
        str(sample),
    )
    assert len(sample.read_bytes().splitlines()) == 3
    assert "wrote 0 requests" in run(
        "export",
        "--config",
        str(config_path),
        "--month",
        month,
        "--select",
        "disagreements",
        "--out",
        str(tmp_path / "none.jsonl"),
    )

    # A person corrects the router's guesses: the zorbly work is maths for this team.
    zorbly = [line for line in lines if "zorbly" in orjson.dumps(line["request"]).decode()]
    assert zorbly and all(line["intent"] != "math" for line in zorbly)  # what the router thought
    for line in zorbly:
        line["intent"] = "math"
    labels, held_out = zorbly[::2], zorbly[1::2]
    (tmp_path / "labels.jsonl").write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in labels))
    (tmp_path / "held_out.jsonl").write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in held_out))

    weights = tmp_path / "team-weights.json"
    corpus = small_corpus(tmp_path / "corpus.jsonl")
    run("train", "--data", str(corpus), "--labels", str(tmp_path / "labels.jsonl"), "--out", str(weights))
    report = run("eval", str(tmp_path / "held_out.jsonl"), "--weights", str(weights), "--compare", "packaged")
    route = next(line.split() for line in report.splitlines() if line.startswith("route"))
    before, after = float(route[1]), float(route[2])
    assert before == 0.0 and after == 1.0, report

    # Switch: the proxy with the team's weights sends the team's maths to the cloud.
    switched = load_config(config_path)
    switched = switched.model_copy(
        update={"routing": switched.routing.model_copy(update={"classifier_weights": str(weights)})}
    )
    proxy = ProxyServer(switched, classifier=IntentModel.load(str(weights)))
    try:
        text = "Format the zorbly reconciliation for the treasury accounts as a table."
        answer = proxy.post(
            "/v1/chat/completions", json={"model": "auto", "messages": [{"role": "user", "content": text}]}
        )
        assert (answer.headers["x-offload-route"], answer.headers["x-offload-intent"]) == ("cloud", "math")
    finally:
        proxy.stop()


def test_export_without_stored_text_says_how_to_get_it(tmp_path: Path, capsys: Any) -> None:
    config = tmp_path / "router.yaml"
    config.write_text(
        f"database: {{url: 'sqlite:///{tmp_path}/u.db'}}\nbackends: {{local: {{kind: vllm, base_url: 'http://127.0.0.1:9/v1', model: m}}}}\n"
    )
    run("db", "upgrade", "--config", str(config))
    run("export", "--config", str(config), "--month", "2026-11", "--out", str(tmp_path / "x.jsonl"))
    assert "store_text is off" in capsys.readouterr().err
