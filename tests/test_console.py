"""The web console (router/console) over HTTP: who may see it, CSRF, escaping, and that its
figures, filters and labels are the database's, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import threading
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import sqlalchemy as sa
from starlette.requests import Request

from classifier.train import load_jsonl
from router.app import create_app
from router.config import Config, parse_config
from router.console import queries
from router.console.service import MonthCache, MonthFigures
from router.console.session import Sessions
from router.edge.auth import KeyStore
from router.ledger import db
from router.ledger.columns import row_values
from router.ledger.insert import insert_rows
from router.ledger.models import UsageRow
from router.ledger.report import main as report_main
from tests.harness import CLOUD_KEY, MemoryRecorder

ADMIN_KEY = "sk-admin-console-0123456789abcdef"
OTHER_ADMIN_KEY = "sk-admin-second-0123456789abcdef"
CLIENT_KEY = "sk-client-console-0123456789abcdef"
MONTH = "2026-10"
BASE = "/offload/console"
PAGES = ["/month", f"/month?month={MONTH}", "/now", "/decisions", "/labels", "/gate"]
HOSTILE = "<script>alert('x')</script><img src=x onerror=alert(1)>"


def make_config(
    db_url: str, *, keys: bool = True, store_text: bool = True, rules: list[dict[str, Any]] | None = None
) -> Config:
    raw: dict[str, Any] = {
        "database": {"url": db_url, "store_text": store_text},
        "backends": {
            "local": {
                "kind": "vllm",
                "base_url": "http://127.0.0.1:9/v1",
                "model": "laguna",
                "max_concurrency": 4,
                "hardware": {"cost": 4800, "amortisation_months": 24, "watts": 300, "price_per_kwh": 0.3},
            },
            "cloud": {
                "kind": "openai",
                "base_url": "http://127.0.0.1:9/v1",
                "model": "gpt-5.1",
                "api_key": CLOUD_KEY,
                "price": {"input_per_mtok": 1.25, "output_per_mtok": 10.0},
            },
        },
        "routing": {"fallbacks": {"local": ["cloud"]}, "confidence_floor": 0.5, "rules": rules or []},
    }
    if keys:
        raw["auth"] = {
            "admin_keys": [{"name": "ops", "key": ADMIN_KEY}, {"name": "second", "key": OTHER_ADMIN_KEY}],
            "keys": [{"name": "team-a", "key": CLIENT_KEY}],
        }
    return parse_config(raw, env={})


def write_config(path: Path, config: Config) -> Path:
    path.write_bytes(orjson.dumps(config.model_dump(mode="json", exclude_none=True)))
    return path


def row(i: int, **fields: Any) -> UsageRow:
    """A decision on day ``1 + i % 28`` of MONTH; coding, served locally, unless told."""
    values: dict[str, Any] = {
        "request_id": f"req-{i:05d}",
        "started_at": datetime(2026, 10, 1 + i % 28, 12, 0, i % 60, tzinfo=UTC),
        "endpoint": "chat",
        "api": "chat",
        "client": "team-a",
        "model_requested": "auto",
        "stream": False,
        "status": 200,
        "intent": "coding",
        "confidence": 0.9,
        "reason": "classifier",
        "decided_route": "local",
        "decided_backend": "local",
        "backend": "local",
        "route": "local",
        "prompt_tokens": 1000 + i,
        "completion_tokens": 100,
        "prompt_text": orjson.dumps({"messages": [{"role": "user", "content": f"fix bug {i}"}]}).decode(),
        "completion_text": f"patched {i}",
    }
    values.update(fields)
    return UsageRow(**values)


def traffic() -> list[UsageRow]:
    """Local coding, cloud math, fallbacks, low confidence, errors, another client, Messages."""
    rows = [row(i) for i in range(40)]
    rows += [
        row(
            100 + i,
            intent="math",
            decided_route="cloud",
            decided_backend="cloud",
            backend="cloud",
            route="cloud",
        )
        for i in range(15)
    ]
    rows += [
        row(200 + i, backend="cloud", route="cloud", fallback=True, fallback_reason="backend_down")
        for i in range(5)
    ]
    rows += [row(300 + i, confidence=0.31, reason="low_confidence", intent="writing") for i in range(6)]
    rows += [row(400 + i, status=502, error_type="upstream_error") for i in range(3)]
    # A box without --enable-prompt-tokens-details: no cached count (valued at the input price).
    rows += [
        row(500 + i, client="team-b", api="messages", endpoint="messages", cached_tokens=None)
        for i in range(4)
    ]
    rows += [row(600, intent=None, confidence=None, reason="override_header")]
    return rows


def seed(db_url: str, rows: list[UsageRow]) -> None:
    db.upgrade(db_url)
    engine = db.make_engine(db_url, pooled=False)
    try:
        insert_rows(engine, [row_values(r, store_text=True) for r in rows])
    finally:
        engine.dispose()


@contextlib.asynccontextmanager
async def console_client(
    config: Config, *, peer: str = "127.0.0.1", scheme: str = "http"
) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(config, classifier=False, recorder=MemoryRecorder())  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=app, client=(peer, 50000))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url=f"{scheme}://testserver") as client:
        yield client


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF token in the page"
    return found.group(1)


ORIGIN = {"origin": "http://testserver"}
FORM = {"content-type": "application/x-www-form-urlencoded"}


async def login(client: httpx.AsyncClient, key: str = ADMIN_KEY) -> httpx.Response:
    page = await client.get(f"{BASE}/login")
    assert page.status_code == 200
    origin = {"origin": f"{client.base_url.scheme}://testserver"}
    return await client.post(f"{BASE}/login", data={"key": key, "csrf": csrf_of(page.text)}, headers=origin)


def figures(html: str) -> dict[str, float]:
    return {m[0]: float(m[1]) for m in re.findall(r'data-figure="(\w+)" data-value="([^"]*)"', html) if m[1]}


def report_json(config_path: Path, month: str) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert report_main(["--config", str(config_path), "--month", month, "--format", "json"]) == 0
    return orjson.loads(out.getvalue())


@pytest.fixture
def seeded(db_url: str) -> Iterator[str]:
    seed(db_url, traffic())
    yield db_url


# ---------------------------------------------------------------- who may see it


async def test_every_page_needs_the_admin_key(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    seed(url, traffic())
    async with console_client(make_config(url)) as client:
        for page in [*PAGES, "/decisions/req-00001", ""]:
            r = await client.get(BASE + page)
            if page == "":
                r = await client.get(r.headers["location"])
            assert r.status_code == 303, page
            assert r.headers["location"].startswith(f"{BASE}/login?next=")
        # A client key, or a wrong key, sent as a header: 403 and 401 (on two pages: five
        # failures in a row would lock this address out, test_console_guessing.py).
        for key, status in ((CLIENT_KEY, 403), ("sk-wrong", 401)):
            for page in PAGES[:2]:
                r = await client.get(BASE + page, headers={"authorization": f"Bearer {key}"})
                assert r.status_code == status, (key, page)
        # The admin key as a header (a script) may read every page.
        for page in PAGES:
            r = await client.get(BASE + page, headers={"x-api-key": ADMIN_KEY})
            assert r.status_code == 200, page
        # POSTs without a session: 401, whatever they carry.
        for path in ("/decisions/req-00001/label", "/logout"):
            r = await client.post(BASE + path, data={"intent": "math", "csrf": "x"}, headers=ORIGIN)
            assert r.status_code == 401
            r = await client.post(
                BASE + path,
                data={"intent": "math"},
                headers={**ORIGIN, "authorization": f"Bearer {ADMIN_KEY}"},
            )
            assert r.status_code == 401
    assert _labels(url) == []


async def test_login_with_wrong_or_client_key_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    seed(url, traffic())
    async with console_client(make_config(url)) as client:
        r = await login(client, "sk-not-a-key")
        assert r.status_code == 401 and "invalid admin key" in r.text
        r = await login(client, CLIENT_KEY)
        assert r.status_code == 403 and "not an admin key" in r.text
        assert (await client.get(f"{BASE}/month")).status_code == 303  # still not logged in
        r = await login(client)
        assert r.status_code == 303 and r.headers["location"] == f"{BASE}/month"
        assert (await client.get(f"{BASE}/month")).status_code == 200
        # Logging out ends it.
        page = await client.get(f"{BASE}/labels")
        r = await client.post(f"{BASE}/logout", data={"csrf": csrf_of(page.text)}, headers=ORIGIN)
        assert r.status_code == 303
        assert (await client.get(f"{BASE}/labels")).status_code == 303


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_session_cookie_attributes(tmp_path: Path, scheme: str) -> None:
    async with console_client(make_config(f"sqlite:///{tmp_path}/u.db"), scheme=scheme) as client:
        r = await login(client)
        cookie = r.headers["set-cookie"]
    attributes = {a.strip().split("=")[0].lower(): a.strip() for a in cookie.split(";")[1:]}
    assert "httponly" in attributes
    assert attributes["samesite"].lower() == "samesite=strict"
    assert attributes["path"] == f"Path={BASE}"
    # Secure over https; on plain http (loopback) a Secure cookie would never come back.
    assert ("secure" in attributes) == (scheme == "https")
    assert ADMIN_KEY not in cookie


async def test_a_forged_or_tampered_cookie_is_not_a_session(tmp_path: Path) -> None:
    async with console_client(make_config(f"sqlite:///{tmp_path}/u.db")) as client:
        await login(client)
        value = client.cookies.get("offload_console", path=BASE)
        assert value
        payload, _, mac = value.partition(".")
        client.cookies.clear()
        for forged in (f"{payload}.{'A' * len(mac)}", f"{payload[:-2]}xx.{mac}", "garbage"):
            client.cookies.set("offload_console", forged, path=BASE)
            assert (await client.get(f"{BASE}/month")).status_code == 303
            client.cookies.clear()
        # Bytes no client library would send (not ASCII) are no session either, not an error.
        auth = make_config(f"sqlite:///{tmp_path}/u.db").auth
        sessions = Sessions(auth, KeyStore(auth))
        raw = Request(
            {"type": "http", "headers": [(b"cookie", f"offload_console={payload}.\xe9".encode("latin-1"))]}
        )
        assert sessions.read(raw) is None


async def test_keyless_console_answers_loopback_only(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    seed(url, traffic())
    config = make_config(url, keys=False)
    async with console_client(config) as client:
        page = await client.get(f"{BASE}/decisions/req-00003")
        assert page.status_code == 200 and "loopback" in page.text
        assert "offload_console=" in page.headers["set-cookie"]
        r = await client.post(
            f"{BASE}/decisions/req-00003/label",
            data={"intent": "tools", "csrf": csrf_of(page.text)},
            headers=ORIGIN,
        )
        assert r.status_code == 303
        # Even keyless, a POST without the page's token is refused.
        r = await client.post(f"{BASE}/decisions/req-00003/label", data={"intent": "math"}, headers=ORIGIN)
        assert r.status_code == 403
    assert [(r["request_id"], r["intent"], r["labelled_by"]) for r in _labels(url)] == [
        ("req-00003", "tools", "loopback")
    ]
    async with console_client(config, peer="10.1.2.3") as client:
        assert (await client.get(f"{BASE}/month")).status_code == 403


# ---------------------------------------------------------------- CSRF


async def test_label_posts_need_the_sessions_token_and_this_origin(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    seed(url, traffic())
    config = make_config(url)
    async with console_client(config) as other:
        await login(other, OTHER_ADMIN_KEY)
        others_token = csrf_of((await other.get(f"{BASE}/decisions/req-00002")).text)
    async with console_client(config) as client:
        await login(client)
        page = await client.get(f"{BASE}/decisions/req-00002")
        token = csrf_of(page.text)
        target = f"{BASE}/decisions/req-00002/label"
        refused = [
            ({"intent": "math"}, ORIGIN),  # no token
            ({"intent": "math", "csrf": "forged"}, ORIGIN),
            ({"intent": "math", "csrf": others_token}, ORIGIN),  # another session's token
            ({"intent": "math", "csrf": token}, {"origin": "http://evil.example"}),
            ({"intent": "math", "csrf": token}, {"origin": "null"}),
            ({"intent": "math", "csrf": token}, {"referer": "http://evil.example/page"}),
            ({"intent": "math", "csrf": token}, {}),  # neither Origin nor Referer
        ]
        for data, headers in refused:
            r = await client.post(target, data=data, headers=headers)
            assert r.status_code == 403, (data, headers)
        assert _labels(url) == []
        # A JSON body is not a form.
        r = await client.post(target, json={"intent": "math", "csrf": token}, headers=ORIGIN)
        assert r.status_code == 415
        # Same origin (by Referer too), the session's token: stored.
        r = await client.post(
            target, data={"intent": "math", "csrf": token}, headers={"referer": "http://testserver/x"}
        )
        assert r.status_code == 303
        assert [(x["intent"], x["labelled_by"]) for x in _labels(url)] == [("math", "ops")]


async def test_login_post_is_csrf_protected(tmp_path: Path) -> None:
    async with console_client(make_config(f"sqlite:///{tmp_path}/u.db")) as client:
        page = await client.get(f"{BASE}/login")
        token = csrf_of(page.text)
        r = await client.post(
            f"{BASE}/login", data={"key": ADMIN_KEY, "csrf": token}, headers={"origin": "http://evil"}
        )
        assert r.status_code == 403
        r = await client.post(f"{BASE}/login", data={"key": ADMIN_KEY, "csrf": "x"}, headers=ORIGIN)
        assert r.status_code == 403
        client.cookies.clear()
        r = await client.post(f"{BASE}/login", data={"key": ADMIN_KEY, "csrf": token}, headers=ORIGIN)
        assert r.status_code == 401  # no login-page session: reload


# ---------------------------------------------------------------- escaping and secrets


async def test_stored_text_and_names_are_escaped(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    body = {
        "messages": [
            {"role": "system", "content": f"system {HOSTILE}"},
            {"role": "user", "content": [{"type": "text", "text": f"user {HOSTILE}"}]},
        ],
        "tools": [{"type": "function", "function": {"name": HOSTILE, "description": HOSTILE}}],
    }
    hostile = row(
        7,
        request_id="req-hostile",
        prompt_text=orjson.dumps(body).decode(),
        completion_text=f"answer {HOSTILE}",
        client=HOSTILE,
        reason=HOSTILE,
        intent=HOSTILE,
        model_requested=HOSTILE,
        fallback=True,
        fallback_reason=HOSTILE,
        started_at=datetime.now(UTC),
    )
    seed(url, [*traffic(), hostile])
    async with console_client(make_config(url)) as client:
        await login(client)
        pages = [
            *PAGES,
            "/decisions/req-hostile",
            f"/decisions?reason={HOSTILE}",
            f"/decisions?client={HOSTILE}",
        ]
        for page in pages:
            r = await client.get(BASE + page)
            assert r.status_code == 200, page
            assert "<script>" not in r.text and "<img src=x" not in r.text, page
            assert "script-src" not in r.headers["content-security-policy"]  # none allowed at all
            assert "default-src 'none'" in r.headers["content-security-policy"]
        detail = (await client.get(f"{BASE}/decisions/req-hostile")).text
        assert (
            detail.count("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;") >= 6
        )  # system, user, tool x2, answer, ...
        listed = (await client.get(f"{BASE}/decisions?reason={HOSTILE}")).text
        assert "req-hostile" in listed


async def test_no_secret_in_any_page(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    seed(url, traffic())
    async with console_client(make_config(url)) as client:
        await login(client)
        for page in [*PAGES, "/decisions/req-00001", "/login", "/console.css"]:
            r = await client.get(BASE + page)
            for secret in (ADMIN_KEY, OTHER_ADMIN_KEY, CLIENT_KEY, CLOUD_KEY):
                assert secret not in r.text, page
                assert all(secret not in v for v in r.headers.values()), page


# ---------------------------------------------------------------- the views


async def test_month_equals_the_report(seeded: str, tmp_path: Path) -> None:
    config = make_config(seeded)
    expected = report_json(write_config(tmp_path / "router.json", config), MONTH)
    async with console_client(config) as client:
        await login(client)
        html = (await client.get(f"{BASE}/month?month={MONTH}")).text
    shown = figures(html)
    # Money in the config's currency, on every amount (report.currency, USD by default).
    assert html.count(" USD</div>") == 4 and f"{expected['currency']} hardware" in html
    assert shown["net_offload"] == pytest.approx(expected["net_offload"])
    assert shown["cloud_spend"] == pytest.approx(expected["cloud_spend"]["total"])
    assert shown["local_value"] == pytest.approx(expected["local_value"]["cloud_equivalent"])
    assert shown["without_cache_discount"] == pytest.approx(expected["local_value"]["without_cache_discount"])
    assert shown["uncounted_prompt_tokens"] == expected["local_value"]["uncounted_prompt_tokens"] > 0
    assert "local prompt tokens had no cached count: valued at the full input price" in html
    for name, prices in expected["prices"].items():
        assert f'<tr><td>{name}</td><td class="n">{prices["input_per_mtok"]}</td>' in html
    assert shown["local_cost"] == pytest.approx(expected["local_cost"]["total"])
    assert shown["amortisation"] == pytest.approx(expected["local_cost"]["amortisation"])
    assert shown["power"] == pytest.approx(expected["local_cost"]["power"])
    assert shown["requests"] == expected["requests"] == len(traffic())
    assert shown["errors"] == expected["errors"] == 3
    assert shown["local_share_requests"] == pytest.approx(expected["local_share"]["requests"])
    assert shown["local_share_tokens"] == pytest.approx(expected["local_share"]["tokens"])
    assert shown["fallbacks"] == expected["fallbacks"]["count"] == 5
    for group in ("route", "intent", "api"):
        for key, counts in expected[f"by_{group}"].items():
            cells = re.search(rf'data-group="{group}" data-key="{key}">(.*?)</tr>', html, re.S)
            assert cells, (group, key)
            values = re.findall(r'data-value="(\d+)"', cells.group(1))
            assert [int(v) for v in values] == [counts["requests"], counts["total_tokens"]]
    assert 'data-key="messages"' in html and "<svg" in html


def test_daily_adds_up_to_the_report(seeded: str, tmp_path: Path) -> None:
    """The daily trend and the report count the same rows the same way (a shadow run is not traffic)."""
    from router.ledger.report import build_report, month_bounds

    seed(seeded, [row(700, request_id="req-shadow-run", shadow_of="req-00001")])
    config = make_config(seeded)
    report = build_report(config, MONTH)
    engine = db.make_engine(seeded, pooled=False)
    with engine.connect() as conn:
        days = queries.daily(conn, *month_bounds(MONTH))
    engine.dispose()
    assert len(days) == 31 and days[0].day.isoformat() == "2026-10-01"
    assert sum(d.requests for d in days) == report["requests"] == len(traffic())
    assert sum(d.fallbacks for d in days) == report["fallbacks"]["count"]
    local, cloud = sum(d.answered_local for d in days), sum(d.answered_cloud for d in days)
    assert local / (local + cloud) == pytest.approx(report["local_share"]["requests"])
    assert days[30].requests == 0 and days[30].local_share is None  # the 31st: no rows


async def test_decisions_filters_and_pages(seeded: str) -> None:
    async with console_client(make_config(seeded)) as client:
        await login(client)

        async def ids(query: str) -> list[str]:
            r = await client.get(f"{BASE}/decisions{query}")
            assert r.status_code == 200, query
            return re.findall(r'<tr data-request-id="([^"]+)"', r.text)

        assert len(await ids("")) == queries.PAGE
        assert sorted(await ids("?intent=math")) == [f"req-{100 + i:05d}" for i in range(15)]
        assert sorted(await ids("?low=1")) == [f"req-{300 + i:05d}" for i in range(6)]
        assert sorted(await ids("?low=1&intent=coding")) == []
        assert sorted(await ids("?client=team-b")) == [f"req-{500 + i:05d}" for i in range(4)]
        assert sorted(await ids("?reason=override_header")) == ["req-00600"]
        assert sorted(await ids("?intent=none")) == ["req-00600"]
        cloud = await ids("?route=cloud")
        assert len(cloud) == 20 and "req-00200" in cloud  # the math rows and the fallbacks
        assert sorted(await ids("?route=cloud&intent=coding")) == [f"req-{200 + i:05d}" for i in range(5)]
        # Newest first, and the "older" link continues without overlap.
        first = await client.get(f"{BASE}/decisions")
        older = re.search(r'href="([^"]+)" rel="next"', first.text)
        assert older
        second = re.findall(
            r'<tr data-request-id="([^"]+)"', (await client.get(older.group(1).replace("&amp;", "&"))).text
        )
        page_one = re.findall(r'<tr data-request-id="([^"]+)"', first.text)
        assert len(page_one) + len(second) == len(traffic()) and not set(page_one) & set(second)
        for bad in ("?intent=bogus", "?before=yesterday", f"?client={'x' * 500}"):
            assert (await client.get(f"{BASE}/decisions{bad}")).status_code == 400


async def test_decision_shows_the_request_in_its_dialect_view(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    messages_body = {
        "model": "claude-sonnet-4-6",
        "system": [{"type": "text", "text": "You are Claude Code."}],
        "messages": [
            {"role": "user", "content": "first question"},
            {"role": "assistant", "content": "an answer"},
            {"role": "user", "content": [{"type": "text", "text": "refactor the parser"}]},
        ],
        "tools": [{"name": "Bash", "description": "run a command", "input_schema": {"type": "object"}}],
    }
    seed(
        url,
        [
            row(
                1,
                request_id="req-messages",
                api="messages",
                endpoint="messages",
                prompt_text=orjson.dumps(messages_body).decode(),
            ),
            row(2, request_id="req-untold", prompt_text=None, completion_text=None),
        ],
    )
    async with console_client(make_config(url)) as client:
        await login(client)
        html = (await client.get(f"{BASE}/decisions/req-messages")).text
        assert re.search(r'data-field="system">You are Claude Code\.</pre>', html)
        assert re.search(r'data-field="user">refactor the parser</pre>', html)
        assert "<code>Bash</code> run a command" in html and "patched 1" in html
        assert "Not stored" in (await client.get(f"{BASE}/decisions/req-untold")).text
        assert (await client.get(f"{BASE}/decisions/nope")).status_code == 404


async def test_now_shows_backends_and_recent_fallbacks(seeded: str) -> None:
    async with console_client(make_config(seeded)) as client:
        await login(client)
        state = client._transport.app.state.proxy  # type: ignore[attr-defined]
        state.pool.backends["local"].endpoints[0].breaker.trip()  # as a failing probe does
        state.pool.backends["local"].endpoints[0].waiting = 3
        html = (await client.get(f"{BASE}/now")).text
    assert 'data-backend="local" data-up="false"' in html and 'data-backend="cloud" data-up="true"' in html
    assert "opened by probe" in html and 'data-field="waiting">3</td>' in html
    assert html.count("backend_down") >= 5


async def test_now_shows_each_endpoints_account_in_tokens(seeded: str) -> None:
    from router.forward.admission import EndpointLoad, Rate

    async with console_client(make_config(seeded)) as client:
        await login(client)
        state = client._transport.app.state.proxy  # type: ignore[attr-defined]
        load = EndpointLoad(30.0, Rate.starting_at(650.0), Rate.starting_at(21.0), kv_capacity=825_000)
        state.pool.backends["local"].endpoints[0].load = load
        html = (await client.get(f"{BASE}/now")).text
    assert 'data-table="admission"' in html
    assert re.search(r'data-field="prefill_tps">650', html)
    assert re.search(r'data-field="kv_headroom_tokens">825,000', html)


async def test_labels_are_stored_shown_and_exported(seeded: str, tmp_path: Path) -> None:
    config = make_config(seeded)
    async with console_client(config) as client:
        await login(client)
        for request_id, intent in (("req-00300", "writing"), ("req-00301", "math"), ("req-00001", "coding")):
            page = await client.get(f"{BASE}/decisions/{request_id}")
            r = await client.post(
                f"{BASE}/decisions/{request_id}/label",
                data={"intent": intent, "csrf": csrf_of(page.text)},
                headers=ORIGIN,
            )
            assert r.status_code == 303 and r.headers["location"].endswith("?labelled=1")
        # Relabelling replaces; unknown intents and requests are refused.
        token = csrf_of((await client.get(f"{BASE}/labels")).text)
        r = await client.post(
            f"{BASE}/decisions/req-00001/label", data={"intent": "tools", "csrf": token}, headers=ORIGIN
        )
        assert r.status_code == 303
        r = await client.post(
            f"{BASE}/decisions/req-00001/label", data={"intent": "poetry", "csrf": token}, headers=ORIGIN
        )
        assert r.status_code == 400
        r = await client.post(
            f"{BASE}/decisions/nope/label", data={"intent": "math", "csrf": token}, headers=ORIGIN
        )
        assert r.status_code == 404
        labels_page = (await client.get(f"{BASE}/labels")).text
        detail = (await client.get(f"{BASE}/decisions/req-00301")).text
    stored = {r["request_id"]: (r["intent"], r["labelled_by"]) for r in _labels(seeded)}
    assert stored == {
        "req-00300": ("writing", "ops"),
        "req-00301": ("math", "ops"),
        "req-00001": ("tools", "ops"),
    }
    shown = figures(labels_page)
    assert shown["labelled"] == 3
    assert shown["intent_agreement"] == pytest.approx(1 / 3)  # only req-00300 (writing) agrees
    # The low-confidence rows went local; writing and math would have gone to the cloud, tools local.
    assert shown["route_agreement"] == pytest.approx(1 / 3)
    assert "Labelled <strong>math</strong> by ops" in detail

    out = tmp_path / "labelled.jsonl"
    from router.ledger.export import main as export_main

    cfg = write_config(tmp_path / "router.json", config)
    assert (
        export_main(["--config", str(cfg), "--month", MONTH, "--select", "labelled", "--out", str(out)]) == 0
    )
    lines = {line["id"]: line for line in map(orjson.loads, out.read_bytes().splitlines())}
    assert {k: (v["intent"], v["router_intent"], v["labelled_by"]) for k, v in lines.items()} == {
        "req-00300": ("writing", "writing", "ops"),
        "req-00301": ("math", "writing", "ops"),
        "req-00001": ("tools", "coding", "ops"),
    }
    assert lines["req-00301"]["request"] == {"messages": [{"role": "user", "content": "fix bug 301"}]}
    assert sorted(e.intent for e in load_jsonl(out)) == ["math", "tools", "writing"]  # offload train reads it


# ---------------------------------------------------------------- off the request path


async def test_queries_and_renders_run_in_the_consoles_threads(
    seeded: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    real = queries.decisions

    def spy(*args: Any, **kw: Any) -> Any:
        seen.append(threading.current_thread().name)
        return real(*args, **kw)

    monkeypatch.setattr(queries, "decisions", spy)
    async with console_client(make_config(seeded)) as client:
        await login(client)
        assert (await client.get(f"{BASE}/decisions")).status_code == 200
    assert seen and all(name.startswith("offload-console") for name in seen)


async def test_month_figures_are_kept_and_refreshed_in_the_background() -> None:
    computed: list[str] = []
    release = asyncio.Event()

    async def compute(month: str) -> MonthFigures:
        computed.append(month)
        if len(computed) > 1:
            await release.wait()  # a slow recomputation
        report = {"partial": True, "n": len(computed)}
        return MonthFigures(month, report, [], datetime.now(UTC), 0.0)

    cache = MonthCache(compute, ttl_s=0.05)
    first = await cache.get("2026-11")
    assert first.report["n"] == 1 and (await cache.get("2026-11")) is first  # fresh: kept
    await asyncio.sleep(0.06)
    stale = await asyncio.wait_for(cache.get("2026-11"), 0.05)  # stale: answered at once...
    assert stale is first and computed == ["2026-11", "2026-11"]  # ...while one recomputation runs
    assert (await cache.get("2026-11")) is first and len(computed) == 2  # not a second one
    release.set()
    await asyncio.sleep(0.01)
    assert (await cache.get("2026-11")).report["n"] == 2


async def test_database_off_or_missing(tmp_path: Path) -> None:
    config = make_config(f"sqlite:///{tmp_path}/never.db")
    async with console_client(config) as client:
        await login(client)
        assert "No usage recorded" in (await client.get(f"{BASE}/month")).text
        r = await client.get(f"{BASE}/decisions")
        assert r.status_code == 503 and "nothing recorded yet" in r.text
        now = await client.get(f"{BASE}/now")
        assert now.status_code == 200 and "nothing recorded yet" in now.text
    assert not (tmp_path / "never.db").exists()


def _labels(db_url: str) -> list[dict[str, Any]]:
    engine = db.make_engine(db_url, pooled=False)
    try:
        with engine.connect() as conn:
            return [
                dict(r._mapping) for r in conn.execute(sa.text("SELECT * FROM labels ORDER BY request_id"))
            ]
    finally:
        engine.dispose()
