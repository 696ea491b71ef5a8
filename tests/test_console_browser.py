"""The console in a real browser (Debian's chromium, driven by Playwright), against the real
proxy writing real usage rows: log in, read the month against `offload report`, watch a backend
go down on the Now view, filter to low confidence, label one, export it, and a cross-site
form refused.

Screenshots of each view go to ``$OFFLOAD_CONSOLE_SCREENSHOTS`` (default: the test's tmp dir).
"""

from __future__ import annotations

import http.server
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from router.config import parse_config
from router.fake.upstream import RunningFake
from router.ledger.export import main as export_main
from router.ledger.writer import UsageRecorder
from tests.conftest import fake_config
from tests.harness import CLOUD_KEY, CLOUD_MODEL, LOCAL_MODEL, ProxyServer, free_port, wait_until
from tests.test_console import ADMIN_KEY, CLIENT_KEY, _labels, report_json, write_config

CHROMIUM = os.environ.get("OFFLOAD_CHROMIUM", "/usr/bin/chromium")
sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not shutil.which(CHROMIUM), reason=f"no chromium at {CHROMIUM}")

PROBE_S = 1.0
PROMPTS = [
    "write a python function that reverses a list",
    "prove that the sum of two odd numbers is even",
    "ok",  # the classifier cannot tell: low confidence
    "<script>alert(1)</script> make this launch announcement sound exciting",
    "fix the failing test in parser.py",
]


@pytest.fixture
def proxy_with_db(tmp_path: Path, local_fake: RunningFake, cloud_fake: RunningFake) -> Iterator[ProxyServer]:
    config = parse_config(
        {
            "database": {
                "url": f"sqlite:///{tmp_path}/usage.db",
                "store_text": True,
                "flush_interval_s": 0.1,
                "spool_path": str(tmp_path / "spool.jsonl"),
            },
            "auth": {
                "admin_keys": [{"name": "ops-lead", "key": ADMIN_KEY}],
                "keys": [{"name": "team-a", "key": CLIENT_KEY}],
            },
            "backends": {
                "local": {
                    "kind": "vllm",
                    "base_url": local_fake.url,
                    "model": LOCAL_MODEL,
                    "max_concurrency": 8,
                    "hardware": {"cost": 4800, "amortisation_months": 24, "watts": 300, "price_per_kwh": 0.3},
                },
                "cloud": {
                    "kind": "openai",
                    "base_url": cloud_fake.url,
                    "model": CLOUD_MODEL,
                    "api_key": CLOUD_KEY,
                    "price": {"input_per_mtok": 1.25, "output_per_mtok": 10.0},
                },
            },
            "routing": {"fallbacks": {"local": ["cloud"]}, "confidence_floor": 0.5},
            "health": {"interval_s": PROBE_S, "probe_timeout_s": 0.5},
        },
        env={},
    )
    server = ProxyServer(config, classifier=True, recorder=UsageRecorder(config.database))
    yield server
    server.stop()


def _send_traffic(proxy: ProxyServer, local: RunningFake) -> int:
    """Each prompt once; the first local request fails upstream and falls back to the cloud."""
    fake_config(local, fail_status=500, fail_count=1)
    for text in PROMPTS:
        r = proxy.post(
            "/v1/chat/completions",
            headers={"authorization": f"Bearer {CLIENT_KEY}"},
            json={"model": "auto", "messages": [{"role": "user", "content": text}]},
        )
        assert r.status_code == 200, r.text
    return len(PROMPTS)


def _rows(proxy: ProxyServer) -> int:
    engine = proxy.state.recorder.engine
    if engine is None:
        return 0
    with engine.connect() as conn:
        return conn.exec_driver_sql("SELECT count(*) FROM usage").scalar_one()


def _request_with(proxy: ProxyServer, text: str) -> str:
    engine = proxy.state.recorder.engine
    with engine.connect() as conn:
        return conn.exec_driver_sql(
            "SELECT request_id FROM usage WHERE prompt_text LIKE ?", (f"%{text}%",)
        ).scalar_one()


class _Attacker:
    """Another origin on this machine serving a form aimed at the console."""

    def __init__(self, html: str) -> None:
        body = html.encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return

        self.port = free_port()
        self.server = http.server.HTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_console_in_a_browser(proxy_with_db: ProxyServer, local_fake: RunningFake, tmp_path: Path) -> None:
    proxy = proxy_with_db
    sent = _send_traffic(proxy, local_fake)
    assert wait_until(lambda: _rows(proxy) == sent, timeout=10)
    shots = Path(os.environ.get("OFFLOAD_CONSOLE_SCREENSHOTS") or tmp_path / "screens")
    shots.mkdir(parents=True, exist_ok=True)
    console = f"{proxy.url}/offload/console"
    month = time.strftime("%Y-%m", time.gmtime())
    config_file = write_config(tmp_path / "router.json", proxy.config)
    dialogs: list[str] = []

    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        try:
            # Logging in: a wrong key is refused, the admin key lands on the month.
            page.goto(f"{console}/month")
            assert "/offload/console/login" in page.url
            page.fill("#key", "sk-wrong")
            page.click("button[type=submit]")
            assert "invalid admin key" in page.inner_text("main")
            page.screenshot(path=str(shots / "login.png"))
            page.fill("#key", ADMIN_KEY)
            page.click("button[type=submit]")
            page.wait_for_url(f"{console}/month")
            cookie = next(c for c in page.context.cookies() if c["name"] == "offload_console")
            assert (
                cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/offload/console"
            )

            # Month: the same figures as `offload report --format json`.
            report = report_json(config_file, month)
            shown = {
                el.get_attribute("data-figure"): float(el.get_attribute("data-value") or "nan")
                for el in page.query_selector_all("[data-figure]")
            }
            assert shown["requests"] == report["requests"] == sent
            # The month in progress accrues hardware and power by the second: the page and the
            # report, computed moments apart, agree to within a cent.
            assert shown["net_offload"] == pytest.approx(report["net_offload"], abs=0.01)
            assert shown["cloud_spend"] == pytest.approx(report["cloud_spend"]["total"])
            assert shown["local_value"] == pytest.approx(report["local_value"]["cloud_equivalent"])
            assert shown["local_cost"] == pytest.approx(report["local_cost"]["total"], abs=0.01)
            assert shown["fallbacks"] == report["fallbacks"]["count"] == 1
            assert shown["local_share_requests"] == pytest.approx(report["local_share"]["requests"])
            assert page.locator("svg rect.bar").count() >= 2  # the daily charts
            page.screenshot(path=str(shots / "month.png"), full_page=True)

            # Decisions: filter to low confidence, open one, label it.
            page.click("nav >> text=Decisions")
            assert page.locator("tr[data-request-id]").count() == sent
            page.check("input[name=low]")
            page.click("form.filters button[type=submit]")
            assert "low=1" in page.url
            rows = page.locator("tr[data-request-id]")
            assert rows.count() >= 1
            confidences = [float(c) for c in page.locator("td[data-field=confidence]").all_inner_texts()]
            assert confidences and all(c < 0.5 for c in confidences)
            page.screenshot(path=str(shots / "decisions.png"), full_page=True)
            request_id = rows.first.get_attribute("data-request-id")
            rows.first.locator("a").first.click()
            page.wait_for_url(f"{console}/decisions/{request_id}")
            assert page.inner_text("pre[data-field=user]") == "ok"
            page.select_option("#intent", "writing")
            page.click(".label-form button[type=submit]")
            assert "Label saved." in page.inner_text("main")
            assert "Labelled writing by ops-lead" in page.inner_text("[data-field=label]")
            page.screenshot(path=str(shots / "decision.png"), full_page=True)
            assert [
                (x["request_id"], x["intent"], x["labelled_by"]) for x in _labels(proxy.config.database.url)
            ] == [(request_id, "writing", "ops-lead")]
            out = tmp_path / "labelled.jsonl"
            assert (
                export_main(
                    [
                        "--config",
                        str(config_file),
                        "--month",
                        month,
                        "--select",
                        "labelled",
                        "--out",
                        str(out),
                    ]
                )
                == 0
            )
            exported = [orjson.loads(line) for line in out.read_bytes().splitlines()]
            assert [(x["id"], x["intent"], x["labelled_by"]) for x in exported] == [
                (request_id, "writing", "ops-lead")
            ]

            # The hostile prompt is shown as text, and no script ran.
            page.goto(f"{console}/decisions/{_request_with(proxy, '<script>')}")
            assert page.inner_text("pre[data-field=user]").startswith("<script>alert(1)</script> make")

            # Labels: the agreement.
            page.click("nav >> text=Labels")
            assert page.get_attribute("[data-figure=labelled]", "data-value") == "1"
            page.screenshot(path=str(shots / "labels.png"), full_page=True)

            # Forms on other origins, with a forged token and even with the page's real one.
            # From localhost (another site) the SameSite=Strict cookie stays home: 401. From
            # another port of 127.0.0.1 (the same site: the cookie goes along) the Origin is
            # what refuses it: 403.
            token = page.get_attribute("input[name=csrf]", "value")
            target = f"{console}/decisions/{request_id}/label"
            attacker = _Attacker(
                "".join(
                    f'<form method="post" action="{target}">'
                    f'<input type="hidden" name="intent" value="math">'
                    f'<input type="hidden" name="csrf" value="{csrf}"><button id="b{i}">go</button></form>'
                    for i, csrf in enumerate(("forged", token))
                )
            )
            try:
                for host, status in (("localhost", 401), ("127.0.0.1", 403)):
                    for i in range(2):
                        page.goto(f"http://{host}:{attacker.port}/")
                        with page.expect_navigation() as nav:
                            page.click(f"#b{i}")
                        assert nav.value is not None and nav.value.status == status, (host, i)
                page.screenshot(path=str(shots / "csrf-refused.png"))
            finally:
                attacker.close()
            assert [x["intent"] for x in _labels(proxy.config.database.url)] == ["writing"]

            # Now: both up, then the local box goes away and shows down within one probe.
            page.goto(f"{console}/now")
            assert page.get_attribute("[data-backend=local]", "data-up") == "true"
            page.screenshot(path=str(shots / "now.png"), full_page=True)
            local_fake.stop()
            stopped = time.monotonic()
            while page.get_attribute("[data-backend=local]", "data-up") != "false":
                assert time.monotonic() - stopped < PROBE_S + 1.0, "the Now view did not show the box down"
                time.sleep(0.1)
                page.reload()
            assert page.get_attribute("[data-backend=cloud]", "data-up") == "true"
            page.screenshot(path=str(shots / "now-down.png"), full_page=True)
            assert page.locator("table.fallbacks tbody tr").count() == 1  # the first request's
        finally:
            browser.close()
    assert dialogs == []  # no script ran, hostile text included
    r = httpx.get(f"{console}/labels", headers={"authorization": f"Bearer {CLIENT_KEY}"}, timeout=5)
    assert r.status_code == 403
