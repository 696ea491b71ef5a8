"""End to end: what the upstream reported is what lands in SQL, through outages too."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import openai
import pytest
import sqlalchemy as sa

from router.config import DatabaseConfig
from router.ledger import db
from router.ledger.writer import UsageRecorder
from tests.conftest import fake_config
from tests.harness import ProxyServer, make_config, wait_until
from tests.test_accounting import TcpProxy

USER = [{"role": "user", "content": "add type hints to this module"}]
TOOLS = [
    {"type": "function", "function": {"name": "shell", "parameters": {"type": "object", "properties": {}}}}
]


def rows(url: str) -> dict[str, dict]:
    engine = db.make_engine(url, pooled=False)
    with engine.connect() as conn:
        found = conn.execute(sa.text("SELECT * FROM usage")).mappings().all()
    engine.dispose()
    return {r["request_id"]: dict(r) for r in found}


def recorder_for(url: str, tmp_path: Path) -> UsageRecorder:
    config = DatabaseConfig(
        url=url, spool_path=str(tmp_path / "spool.jsonl"), batch_size=50, flush_interval_s=0.05
    )
    return UsageRecorder(config, retry_s=0.1)


def test_token_counts_in_sql_equal_what_the_upstream_reported(db_url, tmp_path, local_fake, cloud_fake):
    db.upgrade(db_url)
    server = ProxyServer(make_config(local_fake.url, cloud_fake.url), recorder=recorder_for(db_url, tmp_path))
    expected: dict[str, tuple[str, int, int]] = {}  # request id → (backend, prompt, completion)
    try:
        c = openai.OpenAI(base_url=server.base_url, api_key="x")

        def note(raw: openai.APIResponse, usage: object) -> None:
            expected[raw.headers["x-request-id"]] = (
                raw.headers["x-offload-route"],
                usage.prompt_tokens,  # type: ignore[attr-defined]
                usage.completion_tokens,  # type: ignore[attr-defined]
            )

        for model in ("local", "cloud"):
            raw = c.chat.completions.with_raw_response.create(model=model, messages=USER)
            note(raw, raw.parse().usage)
            raw = c.chat.completions.with_raw_response.create(
                model=model, messages=USER, stream=True, stream_options={"include_usage": True}
            )
            note(raw, [ch for ch in raw.parse()][-1].usage)
            raw = c.chat.completions.with_raw_response.create(model=model, messages=USER, tools=TOOLS)
            note(raw, raw.parse().usage)
        # Streams whose client did not ask for usage: the proxy asked on its behalf.
        raw = c.chat.completions.with_raw_response.create(model="local", messages=USER, stream=True)
        list(raw.parse())
        direct = openai.OpenAI(base_url=local_fake.url, api_key="x").chat.completions.create(
            model="m", messages=USER, stream=True, stream_options={"include_usage": True}
        )
        note(raw, [ch for ch in direct][-1].usage)
        # A fallback: the local box answers 503 once, the cloud serves.
        fake_config(local_fake, fail_status=503, fail_count=1)
        raw = c.chat.completions.with_raw_response.create(model="auto", messages=USER)
        assert raw.headers["x-offload-fallback"] == "1"
        note(raw, raw.parse().usage)
        raw = c.completions.with_raw_response.create(model="local", prompt="def f(x):")
        note(raw, raw.parse().usage)
    finally:
        server.stop()  # flushes the writer
    stored = rows(db_url)
    assert len(stored) == len(expected) == 9
    for request_id, (backend, prompt, completion) in expected.items():
        row = stored[request_id]
        assert (row["backend"], row["prompt_tokens"], row["completion_tokens"]) == (
            backend,
            prompt,
            completion,
        )
        assert not row["tokens_estimated"]
    fallback = [r for r in stored.values() if r["fallback"]]
    assert len(fallback) == 1 and fallback[0]["fallback_reason"] == "http_503"
    assert fallback[0]["decided_backend"] == "local" and fallback[0]["backend"] == "cloud"


async def test_database_outage_under_traffic_loses_no_row(pg_url, tmp_path, local_fake, cloud_fake):
    db.upgrade(pg_url)
    real = sa.make_url(pg_url)
    tcp = TcpProxy(real.host or "127.0.0.1", real.port or 5432)
    await tcp.start()
    via = real.set(host="127.0.0.1", port=tcp.port).render_as_string(hide_password=False)
    server = ProxyServer(make_config(local_fake.url, cloud_fake.url), recorder=recorder_for(via, tmp_path))
    answered = 0
    try:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:

            async def burst(n: int) -> None:
                nonlocal answered
                results = await asyncio.gather(
                    *(
                        client.post(
                            "/chat/completions",
                            json={"model": ("local", "cloud")[i % 2], "messages": USER, "stream": i % 3 == 0},
                        )
                        for i in range(n)
                    )
                )
                assert [r.status_code for r in results] == [200] * n
                answered += n

            await burst(50)
            await tcp.stop()  # the database goes away
            for _ in range(4):
                await burst(50)
                await asyncio.sleep(0.1)
            assert await asyncio.to_thread(wait_until, lambda: server.state.recorder.rows_spooled > 0, 30)
            await tcp.start()  # and comes back
            await burst(50)
            # While the proxy runs on, the spool is replayed: every request has its row.
            replayed = await asyncio.to_thread(wait_until, lambda: len(rows(pg_url)) == 300, 30, 0.2)
    finally:
        await asyncio.to_thread(server.stop)
        await tcp.stop()
    assert answered == 300
    assert replayed, f"{len(rows(pg_url))} rows for 300 requests"
    assert len(rows(pg_url)) == 300


def test_sqlite_is_created_and_migrated_by_serve(tmp_path):
    url = f"sqlite:///{tmp_path}/fresh.db"
    from router.config import parse_config
    from router.ops.cli import _prepare_database

    config = parse_config(
        {
            "database": {"url": url},
            "backends": {"local": {"kind": "vllm", "base_url": "http://x/v1", "model": "m"}},
        },
        env={},
    )
    _prepare_database(config, None)
    assert db.current_revision(url) == db.head_revision()


@pytest.mark.parametrize("behind", [True])
def test_serve_refuses_out_of_date_postgres(pg_url, tmp_path, behind):
    import subprocess
    import sys

    config = tmp_path / "router.yaml"
    config.write_text(
        f"database: {{url: '{pg_url}'}}\nbackends: {{local: {{kind: vllm, base_url: 'http://127.0.0.1:9/v1', model: m}}}}\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "router.ops.cli", "serve", "--config", str(config), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert f"offload db upgrade --config {config}" in result.stderr


def test_serve_starts_while_the_database_is_unreachable(tmp_path):
    """The proxy serves from the first second; rows wait in the spool for the database."""
    import subprocess
    import sys

    from tests.harness import free_port

    port = free_port()
    config = tmp_path / "router.yaml"
    config.write_text(
        f"database: {{url: 'postgresql+psycopg://postgres@127.0.0.1:{free_port()}/test', "
        f"spool_path: '{tmp_path}/spool.jsonl'}}\n"
        "backends: {local: {kind: vllm, base_url: 'http://127.0.0.1:9/v1', model: m}}\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "router.ops.cli", "serve", "--config", str(config), "--port", str(port)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: _healthy(port), timeout=30), "serve did not come up"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "database unreachable at start-up" in err


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def test_store_text_keeps_the_answer_as_the_client_saw_it(db_url, tmp_path, local_fake, cloud_fake):
    """With database.store_text on, each row holds the prompt and the answer, streamed or not,
    tool calls included; the stored answer is what the client assembled."""
    db.upgrade(db_url)
    recorder = UsageRecorder(
        DatabaseConfig(
            url=db_url, spool_path=str(tmp_path / "spool.jsonl"), flush_interval_s=0.05, store_text=True
        ),
        retry_s=0.1,
    )
    config = make_config(local_fake.url, cloud_fake.url, database={"enabled": False, "store_text": True})
    server = ProxyServer(config, recorder=recorder)
    seen: dict[str, str] = {}  # request id → the answer as the client assembled it
    try:
        c = openai.OpenAI(base_url=server.base_url, api_key="x")
        for model in ("local", "cloud"):
            raw = c.chat.completions.with_raw_response.create(model=model, messages=USER)
            seen[raw.headers["x-request-id"]] = raw.parse().choices[0].message.content
            raw = c.chat.completions.with_raw_response.create(model=model, messages=USER, stream=True)
            seen[raw.headers["x-request-id"]] = "".join(
                ch.choices[0].delta.content or "" for ch in raw.parse()
            )
            for stream in (False, True):
                raw = c.chat.completions.with_raw_response.create(
                    model=model, messages=USER, tools=TOOLS, stream=stream
                )
                if stream:
                    name, args = "", ""
                    for ch in raw.parse():
                        for call in ch.choices[0].delta.tool_calls or [] if ch.choices else []:
                            name += call.function.name or "" if call.function else ""
                            args += call.function.arguments or "" if call.function else ""
                else:
                    call = raw.parse().choices[0].message.tool_calls[0]
                    name, args = call.function.name, call.function.arguments
                seen[raw.headers["x-request-id"]] = f"tool_call: {name}({args})"
        raw = c.completions.with_raw_response.create(model="local", prompt="def f(x):", stream=True)
        seen[raw.headers["x-request-id"]] = "".join(ch.choices[0].text for ch in raw.parse())
    finally:
        server.stop()
    stored = rows(db_url)
    assert len(stored) == len(seen) == 9
    for request_id, answer in seen.items():
        assert answer and stored[request_id]["completion_text"] == answer
        assert ("add type hints" in stored[request_id]["prompt_text"]) != (
            "def f(x):" in stored[request_id]["prompt_text"]
        )
    assert 'tool_call: shell({"cmd": "ls -la"})' in {r["completion_text"] for r in stored.values()}
