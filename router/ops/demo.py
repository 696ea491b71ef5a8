"""``offload demo``: the whole proxy on one machine in a few seconds, for newcomers.

Everything runs in this process: a simulated local vLLM box and a simulated
cloud provider (with an API key, like the real one), each the fake upstream of
:mod:`router.fake.upstream` on a thread of its own, and the real proxy app under
uvicorn with a SQLite database in a temporary directory.
A small batch of agent-style requests goes through the proxy over HTTP (a
coding task, a tool-loop turn, a hard integral, a launch blog post, then a
coding task with the local box stopped), and the demo prints where each went
and why, then flushes the accounting and prints the month's offload report.

The fake upstream is packaged with the router, not kept in ``tests/``, so that
the command works from an installed wheel. Nothing leaves 127.0.0.1, no GPU
and no cloud key are needed.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from router.app import create_app
from router.config import Config, DatabaseConfig, parse_config
from router.decide.policy import Classifier, load_classifier
from router.fake.server import Fake
from router.fake.upstream import RunningFake
from router.ledger.models import UsageRow
from router.ledger.report import month_bounds
from router.ledger.writer import UsageRecorder
from router.ops.demo_requests import DemoRequest, demo_requests

LOCAL_MODEL = "poolside/Laguna-S-2.1-NVFP4"
CLOUD_MODEL = "gpt-5.1"
# A made-up key: the simulated cloud checks it exactly as a real provider would.
DEMO_CLOUD_KEY = "sk-demo-" + "0" * 24
# The starter config's money (config/router.yaml; tests/test_config_copies.py keeps them
# equal): gpt-5.1's list prices and a DGX Spark's price and power draw, so that the demo's
# report shows what a real month of this traffic would cost and save.
CLOUD_PRICE = {"input_per_mtok": 1.25, "output_per_mtok": 10.0, "cached_input_per_mtok": 0.125}
LOCAL_HARDWARE = {"cost": 3999, "amortisation_months": 36, "watts": 170, "price_per_kwh": 0.30}


# ------------------------------------------------------------- upstreams


def simulated_upstream(mode: str, model: str, api_key: str | None = None) -> RunningFake:
    """The tests' fake upstream, answering like a model would: a tool call only when one is due."""
    fake = Fake(mode, api_key, model)
    set_reply_length(fake, 16)
    fake.behaviour.chat_always_calls = False  # after a tool result, answer in words
    return RunningFake(fake)


def set_reply_length(fake: Fake, tokens: int) -> None:
    """The next answers are ``tokens`` long (the fake bills one token per piece), ending in a
    final answer so that a shadow run's comparison has something to judge."""
    where = "the local Laguna box" if fake.mode == "vllm" else "the cloud model"
    head = f"(simulated answer from {where})"
    tail = "Final answer: \\boxed{42}."
    filler = itertools.cycle(("Here", "is", "what", "I", "would", "do,", "step", "by", "step."))
    room = max(0, tokens - len(head.split()) - len(tail.split()))
    words = [*head.split(), *itertools.islice(filler, room), *tail.split()]
    fake.behaviour.reply_tokens = [w if i == 0 else f" {w}" for i, w in enumerate(words)]


# ------------------------------------------------------------- the proxy


class TappedRecorder(UsageRecorder):
    """The real SQL recorder, also keeping this run's rows by request id for the table."""

    def __init__(self, config: DatabaseConfig) -> None:
        super().__init__(config)
        self.seen: dict[str, UsageRow] = {}

    def record(self, row: UsageRow) -> None:
        self.seen[row.request_id] = row
        super().record(row)


def simulated_backends(local_url: str, cloud_url: str, cloud_key: str) -> dict[str, Any]:
    """The starter config's two backends (the Laguna box on vLLM, gpt-5.1 as the cloud, with
    their money) at the simulated upstreams' URLs: the demo's, and the proxy tests' (whose
    harness builds on this rather than keep a copy)."""
    return {
        "local": {
            "kind": "vllm",
            "base_url": local_url,
            "model": LOCAL_MODEL,
            "max_concurrency": 32,
            "context_window": 262144,
            "extra_body": {"chat_template_kwargs": {"enable_thinking": False}},
            "hardware": dict(LOCAL_HARDWARE),
        },
        "cloud": {
            "kind": "openai",
            "base_url": cloud_url,
            "model": CLOUD_MODEL,
            "api_key": cloud_key,
            "embeddings_model": "text-embedding-3-small",
            "price": dict(CLOUD_PRICE),
        },
    }


def demo_config(local_url: str, cloud_url: str, workdir: Path) -> Config:
    """Both backends on loopback, SQLite in ``workdir``, fast health probes.

    ``env={}``: the demo never reads OPENAI_API_KEY or any other variable.
    """
    backends = simulated_backends(local_url, cloud_url, DEMO_CLOUD_KEY)
    # The same box with thinking on: it answers copies of the cloud's maths (below).
    backends["local-thinking"] = {"variant_of": "local", "thinking": "on", "max_output_tokens": 32768}
    raw = {
        "database": {
            "url": f"sqlite:///{workdir / 'offload-demo.db'}",
            "spool_path": str(workdir / "offload-spool.jsonl"),
            "flush_interval_s": 0.2,
        },
        "backends": backends,
        "routing": {
            "default": "local",
            "fallbacks": {"local": ["cloud"]},
            "shadow_runs": {"intents": {"math": {"arm": "local-thinking", "rate": 1.0}}},
        },
        # Probe often so that stopping the local box is noticed within a moment.
        "health": {"interval_s": 0.2, "probe_timeout_s": 0.5, "failure_threshold": 1, "open_s": 1.0},
    }
    return parse_config(raw, env={})


class RunningProxy:
    """uvicorn serving the proxy app as a task of the current event loop."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))  # our own socket: no race for a free port
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
        self.server = uvicorn.Server(config)
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.task = asyncio.create_task(self.server.serve(sockets=[self.sock]))
        deadline = time.monotonic() + 15
        while not self.server.started:
            if self.task.done() or time.monotonic() > deadline:
                raise RuntimeError("the proxy did not start")
            await asyncio.sleep(0.02)

    async def stop(self) -> None:
        self.server.should_exit = True
        if self.task is not None:
            await self.task
        self.sock.close()


# ------------------------------------------------------------- requests


@dataclass
class Outcome:
    request: DemoRequest
    status: int
    request_id: str
    backend: str
    fallback: bool


async def send(client: httpx.AsyncClient, item: DemoRequest, use_classifier: bool) -> Outcome:
    """POST one request the way an agent would, streamed or not, and read it to the end."""
    body = {"model": "auto" if use_classifier else item.alias, **item.body}
    if body.get("stream"):
        body["stream_options"] = {"include_usage": True}
    async with client.stream("POST", "/v1/chat/completions", json=body) as response:
        await response.aread()  # a stream is accounted once it has ended
    headers = response.headers
    return Outcome(
        item,
        response.status_code,
        headers.get("x-request-id", ""),
        headers.get("x-offload-route", "?"),
        headers.get("x-offload-fallback") == "1",
    )


async def wait_for_local_down(client: httpx.AsyncClient, timeout: float = 5.0) -> None:
    """Until the proxy's health probe has seen the stopped box (so the reason is backend_down)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready = (await client.get("/readyz")).json()
        if not ready["backends"]["local"]["up"]:
            return
        await asyncio.sleep(0.05)


# ------------------------------------------------------------- output


def _cell(value: object, width: int) -> str:
    text = str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def print_table(outcomes: list[Outcome], rows: dict[str, UsageRow], out: Callable[[str], None]) -> None:
    widths = (32, 12, 14, 9, 40, 7)
    head = ("request", "intent", "route/backend", "fallback", "reason", "tokens")
    out("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    out("-" * (sum(widths) + 2 * (len(widths) - 1)))
    for o in outcomes:
        row = rows.get(o.request_id)
        intent = (row.intent if row else None) or "-"
        route = f"{row.route}/{row.backend}" if row and row.route else o.backend
        reason = row.reason if row else "?"
        if row and row.fallback:
            reason = f"{reason}; fell back: {row.fallback_reason}"
        tokens = row.prompt_tokens + row.completion_tokens if row else "?"
        if o.status != 200:
            reason = f"HTTP {o.status} {reason}"
        cells = (o.request.label, intent, route, "yes" if o.fallback else "no", reason, tokens)
        out("  ".join(_cell(c, w).ljust(w) for c, w in zip(cells, widths, strict=True)))


def print_report(config: Config, rows: list[UsageRow], out: Callable[[str], None]) -> None:
    """The month's report from SQL; per-route totals from this run's rows if the report is unavailable."""
    month = datetime.now(UTC).strftime("%Y-%m")
    try:
        from router.ledger.report import build_report, render

        report = build_report(config, month)
        out(render(report, "table").rstrip())
        if not report["empty"] or not rows:
            line = break_even(report)
            if line:
                out(line)
            return
        # Served rows but an empty report: they never reached SQL (e.g. no migrations found).
        out("(the database has no rows: see the log; per-route totals of this run)")
    except Exception as exc:  # the report module may be unfinished: show the numbers anyway
        out(f"(offload report unavailable: {type(exc).__name__}: {exc}; per-route totals of this run)")
    totals: dict[str, list[int]] = {}
    for row in rows:
        t = totals.setdefault(row.route or "unrouted", [0, 0, 0])
        t[0] += 1
        t[1] += row.prompt_tokens
        t[2] += row.completion_tokens
    out(f"Offload report {month} (this demo run)")
    out(f"{'route':<10}{'requests':>10}{'prompt':>10}{'completion':>12}")
    for route, (n, prompt, completion) in sorted(totals.items()):
        out(f"{route:<10}{n:>10}{prompt:>10}{completion:>12}")


def break_even(report: dict[str, Any]) -> str | None:
    """What the net line means for five requests: the box's month against the cloud-price
    value of a local request like these, as the number of them that pays for the box."""
    local = report["by_route"].get("local")
    served = local["requests"] - local["errors"] if local else 0
    value, box = report["local_value"]["cloud_equivalent"], report["local_cost"]["total"]
    if not served or value <= 0 or box <= 0:
        return None
    each = value / served
    hours, month_hours = report["local_cost"]["hours"], report["local_cost"]["month_hours"]
    box = box * month_hours / hours  # a month in progress has paid for its hours so far
    month = box / each
    day = month / (month_hours / 24)
    return (
        f"net offload is the month's: the box costs {box:,.2f} whatever it serves. A local request like\n"
        f"these is worth {each:,.4f} at cloud prices: the box pays for itself from about\n"
        f"{round(month, -2):,.0f} of them a month ({round(day, -1):,.0f} a day)."
    )


# ------------------------------------------------------------- main


def classifier_or_none(config: Config, out: Callable[[str], None]) -> Classifier | None:
    """The packaged intent model; without one the demo still shows both routes, by alias."""
    try:
        classifier = load_classifier(config.routing.classifier_weights)
        problem = "no classifier package or weights"
    except Exception as exc:  # a broken weights file must not stop the demo
        classifier, problem = None, f"{type(exc).__name__}: {exc}"
    if classifier is None:
        out(
            f"note: the intent classifier is missing ({problem}), so the demo asks for "
            "routes by model alias (local/cloud) instead of model=auto."
        )
    return classifier


async def run(workdir: Path, out: Callable[[str], None]) -> int:
    local = simulated_upstream("vllm", LOCAL_MODEL)
    cloud = simulated_upstream("cloud", CLOUD_MODEL, api_key=DEMO_CLOUD_KEY)
    proxy: RunningProxy | None = None
    outcomes: list[Outcome] = []
    try:
        config = demo_config(local.url, cloud.url, workdir)
        classifier = classifier_or_none(config, out)
        recorder = TappedRecorder(config.database)
        app = create_app(config, classifier=classifier or False, recorder=recorder)
        proxy = RunningProxy(app)
        await proxy.start()
        out(f"simulated local vLLM on {local.url}, simulated cloud on {cloud.url}, proxy on {proxy.url}/v1")
        out("")
        async with httpx.AsyncClient(base_url=proxy.url, timeout=30) as client:
            for item in demo_requests():
                for upstream in (local, cloud):
                    set_reply_length(upstream.fake, item.reply_tokens)
                if item.local_stopped:
                    await asyncio.to_thread(local.stop)
                    await wait_for_local_down(client)
                outcomes.append(await send(client, item, classifier is not None))
                if item.label.startswith("hard integral"):  # let its shadow run finish on the idle box
                    await wait_for_shadow(recorder)
        print_table(outcomes, recorder.seen, out)
    finally:
        if proxy is not None:
            await proxy.stop()  # its shutdown flushes the writer: every row is in SQLite for the report
        await asyncio.to_thread(local.stop)
        await asyncio.to_thread(cloud.stop)
    out("")
    print_report(config, list(recorder.seen.values()), out)
    out("")
    print_comparison(config, out)
    return 0 if all(o.status == 200 for o in outcomes) else 1


async def wait_for_shadow(recorder: TappedRecorder, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not any(r.shadow_of for r in recorder.seen.values()):
        await asyncio.sleep(0.02)


def print_comparison(config: Config, out: Callable[[str], None]) -> None:
    """``offload compare`` for this month: the shadowed maths request beside the cloud's answer."""
    from router.ledger.compare import cloud_spend, pairs, render, summarise

    start, end = month_bounds(datetime.now(UTC).strftime("%Y-%m"))
    lines = summarise(config, pairs(config, start, end), cloud_spend(config, start, end))
    out("The maths request was also answered, in the background, by the idle box with thinking on")
    out("(routing.shadow_runs); `offload compare` puts the two side by side:")
    out(render(datetime.now(UTC).strftime("%Y-%m"), lines).rstrip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="offload demo",
        description="Run the proxy against simulated local and cloud upstreams and print what it did.",
    )
    parser.parse_args(argv or [])
    # Migrations and the HTTP client log a line per step at INFO: noise in a demo.
    for name in ("alembic", "httpx"):
        logging.getLogger(name).setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="offload-demo-") as tmp:
        return asyncio.run(run(Path(tmp), print))


if __name__ == "__main__":
    raise SystemExit(main())
