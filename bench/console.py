"""The console's pages on a month of a busy team's rows, on SQLite and PostgreSQL.

Fills the usage table with ``--rows`` rows (default 1,000,000) spread over the 30 days
before now, through the migrations and ``router.ledger.insert.insert_rows`` in batches:
12 client keys, five APIs, six intents, 4 % of local requests falling back, 1 % errors,
low-confidence decisions, 1 % with stored text, and ``--labels`` labelled decisions.
Then starts a fake vLLM upstream and the real proxy (``offload serve``) as processes,
logs in to the console over HTTP as a browser does, and times each page, each
``--repeat`` times, from request to the last byte:

* Month: the first view since start (the login page has begun computing the figures:
  ``build_report`` and the daily trend; the view waits for the rest), how long that
  computation took, then the views after it (kept figures);
* Now, Labels, a decision's page (with its stored text), a label POST;
* Decisions unfiltered, by each filter, by combinations that match nothing (the worst
  case: every candidate row is ruled out), and an older page.

Last, the proxy's own latency (chat requests to the fake, one at a time): idle, while a
person clicks through the console (two pages a second) and while a client loads console
pages back to back (each from another process).

    .venv/bin/python bench/console.py [--rows 1000000] [--repeat 15]
        [--sqlite PATH] [--postgres postgresql+psycopg://postgres@127.0.0.1:5432/test]
        [--only sqlite|postgres] [--refill]

An existing SQLite file or PostgreSQL schema (``offload_console_bench``) with at least
that many rows is reused (``--refill`` to start again), migrated to head first (the time
printed: for rows written before migration 0006, the backfill of the daily rollup).
Target: every page < 300 ms, the first Month view after a start included.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from overhead import pct, start  # noqa: E402  (bench/ is on the path when run as a script)

from classifier.model import DEFAULT_ROUTES  # noqa: E402
from router.ledger import db  # noqa: E402
from router.ledger.columns import COLUMNS  # noqa: E402
from router.ledger.insert import insert_rows  # noqa: E402
from tests.harness import free_port  # noqa: E402

ADMIN_KEY = "sk-bench-admin-0123456789"
SCHEMA = "offload_console_bench"
BATCH = 5_000
INTENT_ROUTE = DEFAULT_ROUTES
APIS = (("chat", 40), ("responses", 25), ("messages", 30), ("completions", 3), ("embeddings", 2))
REASONS = (("classifier", 70), ("tool_loop", 20), ("override_header", 5), ("rule:marketing", 5))
CLIENTS = [f"team-{i:02d}" for i in range(1, 13)]
CLIENT_WEIGHTS = [2**-i for i in range(len(CLIENTS))]  # a few busy teams, a long tail


# ------------------------------------------------------------------ data


def make_rows(n: int, end: datetime, seed: int = 1) -> Iterator[dict[str, Any]]:
    rnd = random.Random(seed)
    span = 30 * 86_400
    apis, api_w = zip(*APIS, strict=True)
    reasons, reason_w = zip(*REASONS, strict=True)
    for i in range(n):
        api = rnd.choices(apis, api_w)[0]
        intent = None if api == "embeddings" else rnd.choice(list(INTENT_ROUTE))
        confidence = None if intent is None else round(rnd.betavariate(5, 1.5), 3)
        reason = rnd.choices(reasons, reason_w)[0]
        if confidence is not None and confidence < 0.5:
            reason = "low_confidence"
        route = INTENT_ROUTE.get(intent or "", "cloud")
        fell_back = route == "local" and rnd.random() < 0.04
        served = "cloud" if fell_back else route
        text = rnd.random() < 0.01
        prompt = f"please look at case {i}: " + "lorem ipsum " * rnd.randint(10, 150)
        yield {
            **dict.fromkeys(COLUMNS),
            "request_id": f"bench-{i:08d}",
            "started_at": end - timedelta(seconds=span * (i + rnd.random()) / n),
            "endpoint": api,
            "api": api,
            "client": rnd.choices(CLIENTS, CLIENT_WEIGHTS)[0],
            "model_requested": "auto",
            "stream": rnd.random() < 0.7,
            "status": 502 if rnd.random() < 0.01 else 200,
            "intent": intent,
            "confidence": confidence,
            "reason": reason,
            "decided_route": route,
            "decided_backend": route,
            "backend": served,
            "route": served,
            "fallback": fell_back,
            "fallback_reason": rnd.choice(("backend_down", "capacity", "http_503")) if fell_back else None,
            "classifier_version": "bench",
            "prompt_tokens": rnd.randint(200, 30_000),
            "completion_tokens": rnd.randint(20, 3_000),
            "cached_tokens": 0,
            "reasoning_tokens": 0,
            "tokens_estimated": False,
            "latency_ms": rnd.uniform(200, 9_000),
            "ttft_ms": rnd.uniform(50, 900),
            "prompt_text": orjson.dumps({"messages": [{"role": "user", "content": prompt}]}).decode()
            if text
            else None,
            "completion_text": "done" if text else None,
        }


def count(url: str) -> int:
    engine = db.make_engine(url, pooled=False)
    try:
        with engine.connect() as conn:
            if not sa.inspect(conn).has_table("usage"):
                return 0
            return conn.execute(sa.text("SELECT count(*) FROM usage")).scalar_one()
    finally:
        engine.dispose()


def fill(url: str, rows: int, labels: int) -> float:
    """Migrate, insert ``rows`` rows in batches and ``labels`` labels; seconds taken."""
    t0 = time.perf_counter()
    db.upgrade(url)
    engine = db.make_engine(url, pooled=False)
    batch: list[dict[str, Any]] = []
    try:
        for values in make_rows(rows, datetime.now(UTC)):
            batch.append(values)
            if len(batch) == BATCH:
                insert_rows(engine, batch)
                batch.clear()
        insert_rows(engine, batch)
        with engine.begin() as conn:
            picked = random.Random(2).sample(range(rows), min(labels, rows))
            conn.execute(
                sa.text(
                    "INSERT INTO labels (request_id, intent, labelled_by, labelled_at) VALUES (:r, :i, 'bench', :t)"
                ),
                [
                    {
                        "r": f"bench-{i:08d}",
                        "i": random.Random(i).choice(list(INTENT_ROUTE)),
                        "t": datetime.now(UTC),
                    }
                    for i in picked
                ],
            )
        if engine.dialect.name == "postgresql":
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(sa.text("VACUUM ANALYZE usage"))  # as autovacuum would, soon after
    finally:
        engine.dispose()
    return time.perf_counter() - t0


# ------------------------------------------------------------------ timing


def timed(fn: Callable[[], httpx.Response], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = fn()
        out.append(time.perf_counter() - t0)
        assert r.status_code in (200, 303), (r.status_code, r.text[:300])
    return out


def login(client: httpx.Client) -> str:
    page = client.get("/offload/console/login")
    token = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    r = client.post(
        "/offload/console/login",
        data={"key": ADMIN_KEY, "csrf": token},
        headers={"origin": str(client.base_url).rstrip("/")},
    )
    assert r.status_code == 303, r.text[:300]
    labels = client.get("/offload/console/labels")
    return labels.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]


def pages(base: str, repeat: int) -> list[tuple[str, list[float]]]:
    month = datetime.now(UTC).strftime("%Y-%m")
    results: list[tuple[str, list[float]]] = []
    with httpx.Client(base_url=base, timeout=120) as client:
        csrf = login(client)  # the login page starts the month's figures: first, time them cold
        t0 = time.perf_counter()
        first = client.get(f"/offload/console/month?month={month}")
        results.append(("Month, first view since start (waits for the figures)", [time.perf_counter() - t0]))
        assert first.status_code == 200
        took = float(first.text.split("(computed in ", 1)[1].split(" s", 1)[0])
        results.append(("  the month's figures, computed in the background", [took]))
        some_text = client.get("/offload/console/decisions?reason=classifier").text
        request_id = some_text.split('data-request-id="', 1)[1].split('"', 1)[0]
        older = (
            some_text.split('rel="next"', 1)[0].rsplit('href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
        )
        cases: list[tuple[str, str]] = [
            ("Month, kept figures", f"/offload/console/month?month={month}"),
            ("Now", "/offload/console/now"),
            ("Decisions, newest", "/offload/console/decisions"),
            ("Decisions, route=cloud", "/offload/console/decisions?route=cloud"),
            ("Decisions, intent=math", "/offload/console/decisions?intent=math"),
            ("Decisions, reason=rule:marketing", "/offload/console/decisions?reason=rule:marketing"),
            ("Decisions, client=team-12 (rarest)", "/offload/console/decisions?client=team-12"),
            ("Decisions, low confidence", "/offload/console/decisions?low=1"),
            (
                "Decisions, intent=coding + client + low",
                "/offload/console/decisions?intent=coding&client=team-03&low=1",
            ),
            (
                "Decisions, none: route=local + intent=math",
                "/offload/console/decisions?route=local&intent=math",
            ),
            (
                "Decisions, none: reason=classifier + route=local + intent=math",
                "/offload/console/decisions?reason=classifier&route=local&intent=math",
            ),
            ("Decisions, none: client=nobody", "/offload/console/decisions?client=nobody"),
            ("Decisions, older page", older),
            ("Decision page", f"/offload/console/decisions/{request_id}"),
            ("Labels", "/offload/console/labels"),
        ]
        for name, path in cases:
            results.append((name, timed(lambda p=path: client.get(p), repeat)))
        label = {"intent": "coding", "csrf": csrf}
        post = f"/offload/console/decisions/{request_id}/label"
        origin = {"origin": base}
        results.append(
            ("Label (POST, redirect)", timed(lambda: client.post(post, data=label, headers=origin), repeat))
        )
    return results


def proxy_latency(base: str, requests: int) -> dict[str, list[float]]:
    """Chat requests one at a time: idle, while a person clicks through the console (two
    pages a second), and while a client loads console pages back to back. The console's
    client is another process, so that only the proxy is shared."""
    body = {
        "model": "auto",
        "messages": [{"role": "user", "content": "write a python function that reverses a list"}],
    }
    auth = {"authorization": f"Bearer {ADMIN_KEY}"}  # admin keys are client keys too
    out: dict[str, list[float]] = {}
    with httpx.Client(base_url=base, timeout=30, headers=auth) as client:
        for _ in range(50):
            client.post("/v1/chat/completions", json=body)
        out["idle"] = timed(lambda: client.post("/v1/chat/completions", json=body), requests)
        for label, rate in (("console, 2 pages/s", 2.0), ("console, back to back", 0.0)):
            cmd = [sys.executable, __file__, "--load", base, "--rate", str(rate)]
            loader = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
            time.sleep(1.5)  # logged in and loading
            out[label] = timed(lambda: client.post("/v1/chat/completions", json=body), requests)
            loader.terminate()
            views = (loader.communicate(timeout=30)[0] or "0").split()[-1]
            out[f"{label}: pages"] = [float(views)]
    return out


def load(base: str, rate: float) -> None:
    """The console's client (a process of its own): pages in a loop until terminated."""
    paths = [
        "/offload/console/decisions",
        "/offload/console/decisions?low=1",
        "/offload/console/month",
        "/offload/console/now",
        "/offload/console/labels",
    ]
    views = 0
    signal.signal(signal.SIGTERM, lambda *_: (print(views, flush=True), os._exit(0)))
    with httpx.Client(base_url=base, timeout=120) as console:
        login(console)
        while True:
            for p in paths:
                t0 = time.monotonic()
                console.get(p)
                views += 1
                if rate:
                    time.sleep(max(0.0, 1 / rate - (time.monotonic() - t0)))


def serve(url: str, tmp: Path) -> tuple[str, list[Any]]:
    """A fake vLLM and the real proxy on the database; the proxy's base URL and the processes."""
    fake_port, proxy_port = free_port(), free_port()
    fake = start(
        [sys.executable, "-m", "router.fake.upstream", "--port", str(fake_port), "--mode", "vllm"], fake_port
    )
    config = {
        "database": {"url": url, "spool_path": str(tmp / "spool.jsonl")},
        "auth": {"admin_keys": [{"name": "bench", "key": ADMIN_KEY}]},
        "backends": {
            "local": {
                "kind": "vllm",
                "base_url": f"http://127.0.0.1:{fake_port}/v1",
                "model": "m",
                "hardware": {"cost": 4800, "amortisation_months": 24, "watts": 300, "price_per_kwh": 0.3},
            },
            "cloud": {
                "kind": "openai",
                "base_url": f"http://127.0.0.1:{fake_port}/v1",
                "model": "c",
                "api_key": "sk-bench-cloud",
                "price": {"input_per_mtok": 1.25, "output_per_mtok": 10.0},
            },
        },
        "routing": {"fallbacks": {"local": ["cloud"]}},
    }
    path = tmp / f"console-{proxy_port}.json"
    path.write_bytes(orjson.dumps(config))
    cmd = [sys.executable, "-m", "router.ops.cli", "serve", "--config", str(path), "--port", str(proxy_port)]
    proxy = start(cmd, proxy_port)
    return f"http://127.0.0.1:{proxy_port}", [proxy, fake]


def run(name: str, url: str, args: argparse.Namespace, tmp: Path) -> None:
    have = count(url)
    if have < args.rows or args.refill:
        if have:
            raise SystemExit(
                f"{name}: the database holds {have:,} rows, fewer than {args.rows:,}: use --refill"
            )
        print(f"{name}: filling {args.rows:,} rows ...", flush=True)
        print(f"{name}: filled in {fill(url, args.rows, args.labels):.0f} s", flush=True)
    else:
        t0 = time.perf_counter()
        db.upgrade(url)  # a database filled before migration 0006 gets its rollup backfilled here
        print(f"{name}: reusing {have:,} rows (schema upgrade: {time.perf_counter() - t0:.1f} s)", flush=True)
    base, procs = serve(url, tmp)
    try:
        print(f"\n{name}, {args.rows:,} rows: milliseconds per page (median / p90 / max of {args.repeat})")
        for label, times in pages(base, args.repeat):
            ms = [t * 1000 for t in times]
            flag = "" if max(ms) < 300 else "   (over 300 ms)"
            print(f"  {label:<62} {statistics.median(ms):8.1f} {pct(ms, 90):8.1f} {max(ms):8.1f}{flag}")
        if args.latency:
            lat = proxy_latency(base, args.latency)
            print(f"\n{name}: the proxy's own latency, chat one at a time ({args.latency} requests each)")
            for label in ("idle", "console, 2 pages/s", "console, back to back"):
                ms = [t * 1000 for t in lat[label]]
                pages_seen = (
                    f"   ({lat[label + ': pages'][0]:.0f} console pages meanwhile)" if label != "idle" else ""
                )
                print(f"  {label:<22} p50 {pct(ms, 50):6.2f} ms   p99 {pct(ms, 99):6.2f} ms{pages_seen}")
    finally:
        for p in procs:
            p.terminate()
            p.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--labels", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--latency", type=int, default=400, help="proxied requests per latency run (0: skip)")
    parser.add_argument("--sqlite", help="SQLite file (default: one in the temporary directory, kept)")
    parser.add_argument("--postgres", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--only", choices=("sqlite", "postgres"))
    parser.add_argument("--refill", action="store_true")
    parser.add_argument("--load", help=argparse.SUPPRESS)  # the console's client process
    parser.add_argument("--rate", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load:
        load(args.load, args.rate)
        return
    tmp = Path(tempfile.mkdtemp(prefix="offload-console-bench-"))
    if args.only != "postgres":
        path = Path(args.sqlite or Path(tempfile.gettempdir()) / f"offload-console-bench-{args.rows}.db")
        if args.refill:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        run("SQLite", f"sqlite:///{path}", args, tmp)
    if args.only != "sqlite":
        admin = sa.create_engine(args.postgres)
        with admin.begin() as conn:
            if args.refill:
                conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{SCHEMA}" CASCADE'))
            conn.execute(sa.text(f'CREATE SCHEMA IF NOT EXISTS "{SCHEMA}"'))
        admin.dispose()
        url = sa.make_url(args.postgres).update_query_dict({"options": f"-csearch_path={SCHEMA}"})
        run("PostgreSQL", url.render_as_string(hide_password=False), args, tmp)


if __name__ == "__main__":
    main()
