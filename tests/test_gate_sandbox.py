"""The unit-test sandbox of ``offload gate run --allow-code``: each containment on its own.

Each program is graded as a gate case would be: its "unit test" asserts what an escape
would achieve, so a contained program is never a pass; the effect is checked from outside
too (no file written, no secret printed, no process left).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from router.gate.graders import Answer, Verdict, grade
from router.gate.sandbox import Limits, Sandbox
from router.gate.suites import Case

SANDBOX = Sandbox(Limits(timeout_s=2.0))


def graded(code: str, asserts: str = "assert True") -> Verdict:
    case = Case("c", "coding", "p", "programmatic", asserts, metadata={"eval_type": "unit_test"})
    return grade(case, Answer(f"```python\n{code}\n```"), SANDBOX.run)


def sandboxed_processes() -> int:
    """Processes still running a sandboxed program (their command line names its folder)."""
    count = 0
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            count += entry.name.isdigit() and b"offload-gate-" in (entry / "cmdline").read_bytes()
    return count


def test_a_correct_program_passes_and_a_wrong_one_fails() -> None:
    assert graded("def add(a, b):\n    return a + b", "assert add(2, 3) == 5").status == "pass"
    failed = graded("def add(a, b):\n    return a - b", "assert add(2, 3) == 5")
    assert failed.status == "fail" and "AssertionError" in failed.detail


def test_an_infinite_loop_times_out_as_an_error_not_a_pass() -> None:
    verdict = graded("while True:\n    pass")
    assert verdict.status == "error"
    assert verdict.detail.startswith("timed out")


def test_a_sleeping_program_times_out_too() -> None:
    assert graded("import time\ntime.sleep(60)").status == "error"


def test_a_fork_bomb_stops_at_the_process_limit_and_leaves_nothing_running() -> None:
    verdict = graded("import os\nwhile True:\n    os.fork()", "assert False, 'never reached'")
    assert verdict.status in ("fail", "error")
    assert "BlockingIOError" in verdict.detail or verdict.status == "error"  # the limit held
    assert sandboxed_processes() == 0  # and nothing of it is left running


def test_a_4_gb_allocation_fails() -> None:
    verdict = graded("block = bytearray(4 * 1024**3)", "assert len(block) == 4 * 1024**3")
    assert verdict.status == "fail"
    assert "MemoryError" in verdict.detail


def test_writing_outside_its_folder_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "escaped.txt"
    verdict = graded(f"open({str(target)!r}, 'w').write('x')", f"assert open({str(target)!r}).read() == 'x'")
    assert verdict.status == "fail"
    assert not target.exists()


def test_writing_inside_its_own_folder_works() -> None:
    assert (
        graded("open('scratch.txt', 'w').write('ok')", "assert open('scratch.txt').read() == 'ok'").status
        == "pass"
    )


def test_a_big_file_stops_at_the_file_size_limit() -> None:
    verdict = graded("open('big', 'wb').write(b'x' * (64 << 20))", "assert True")
    assert verdict.status == "fail" and "File too large" in verdict.detail


def test_the_proxys_environment_is_out_of_reach(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-proxy-secret-" + os.urandom(8).hex()
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    code = (
        "import os\n"
        "seen = repr(dict(os.environ))\n"
        "for pid in (os.getppid(), 1):\n"
        "    try:\n"
        "        seen += open(f'/proc/{pid}/environ').read()\n"
        "    except OSError:\n"
        "        pass\n"
        "raise SystemExit(seen)\n"
    )
    outcome = SANDBOX.run(code)
    assert secret not in outcome.stderr
    assert "OPENAI_API_KEY" not in outcome.stderr
    assert "PATH" in outcome.stderr  # the clean environment it does get


def test_opening_a_network_socket_is_blocked_where_the_platform_allows() -> None:
    applied = SANDBOX.containment()
    if "net=namespace" not in applied and not any(f"landlock={n}" in applied for n in range(4, 100)):
        pytest.skip(
            f"no network isolation on this machine ({applied or 'limits only'}): docs/gate.md says so"
        )
    import socket

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        verdict = graded(
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1).close()\nreached = True",
            "assert reached",
        )
    assert verdict.status == "fail"
