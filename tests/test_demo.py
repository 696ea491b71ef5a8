"""``offload demo`` end to end, as a newcomer runs it: a subprocess, offline, no GPU, no key."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_demo() -> tuple[subprocess.CompletedProcess[str], float]:
    # No cloud key in the environment: the demo must not need (or read) one.
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OFFLOAD_CONFIG")}
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "router.ops.cli", "demo"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, time.monotonic() - t0


def table_rows(stdout: str) -> dict[str, str]:
    """The demo's table, keyed by the request label (the first column)."""
    labels = ("coding task (streamed)", "tool call", "hard integral", "launch blog post", "local box stopped")
    rows: dict[str, str] = {}
    for line in stdout.splitlines():
        for label in labels:
            if label in line and label not in rows:
                rows[label] = line
    return rows


def test_demo_shows_both_routes_a_fallback_and_the_report() -> None:
    done, seconds = run_demo()
    assert done.returncode == 0, (
        f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr[-3000:]}"
    )
    out = done.stdout
    assert "request" in out and "route/backend" in out and "fallback" in out, out

    rows = table_rows(out)
    assert set(rows) == {
        "coding task (streamed)",
        "tool call",
        "hard integral",
        "launch blog post",
        "local box stopped",
    }, out
    # Local work stayed local, cloud work went to the cloud (by classifier or, while the
    # classifier is unfinished, by model alias: either way both routes are shown).
    assert "local/local" in rows["coding task (streamed)"], out
    assert "local/local" in rows["tool call"] and "tool_loop" in rows["tool call"], out
    assert "cloud/cloud" in rows["hard integral"], out
    assert "cloud/cloud" in rows["launch blog post"], out
    # The box was stopped: the cloud served it as a fallback, and says why.
    stopped = rows["local box stopped"]
    assert "cloud/cloud" in stopped and " yes " in stopped and "fell back" in stopped, out
    # Every served request was accounted with real token counts.
    for line in rows.values():
        assert int(line.split()[-1]) > 0, line

    # The report section: from router.ledger.report, or the per-route totals the demo prints itself.
    report = out[out.index("Offload report") :]
    assert "local" in report and "cloud" in report, report
    # The money lines, at list prices and the box's cost: real amounts, not 0.00.
    money = {
        m[1]: float(m[2].replace(",", "")) for m in re.finditer(r"^([a-z ()+]+):\s+(-?[\d,.]+)", report, re.M)
    }
    spend, value = money["cloud spend (actual)"], money["local tokens at cloud prices"]
    box, net = money["local cost (hardware + power)"], money["net offload"]
    assert 0.01 <= spend < 1 and 0.01 <= value < 1, report  # cents for five requests
    # A Spark: ~111 amortisation + ~37 power a month, of which the month in progress has
    # accrued its hours so far.
    hours, month_hours = map(float, re.search(r"over ([\d,.]+) h of (\d+) so far", report).groups())
    assert 100 < box * month_hours / max(hours, 0.01) < 200 or box < 0.02, report
    assert net == pytest.approx(value - box, abs=0.011), report
    assert "pays for itself from about" in report, report
    assert seconds < 60, f"the demo took {seconds:.1f}s"


def test_demo_shows_the_shadowed_maths_request_and_its_comparison() -> None:
    done, _ = run_demo()
    assert done.returncode == 0, done.stderr[-3000:]
    comparison = done.stdout[done.stdout.index("Shadow runs") :]
    (math,) = [line for line in comparison.splitlines() if line.startswith("math")]
    # One pair: the cloud's answer and the idle box's (thinking on) agreed on the final answer.
    assert math.split()[:5] == ["math", "local-thinking", "1", "1", "0"], comparison
