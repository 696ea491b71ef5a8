"""Model-written code, run contained: only with ``offload gate run --allow-code``.

Each program runs in a fresh process started through :mod:`router.gate.jail`, which
contains it before the program's first line:

- **time**: a wall-clock timeout (the process group is killed; the case counts as an
  error, never a pass) and a CPU-seconds limit;
- **memory**: an address-space limit (a 4 GB allocation fails with MemoryError);
- **processes**: a process-count limit, for a throwaway user of its own when the gate runs
  as root (a fork bomb stops at the limit; every process of that user is killed after);
- **files**: a file-size limit, a private temporary folder as its working directory and
  home, and, with Landlock (Linux 5.13+), writes allowed in that folder only and reads
  only of the interpreter's and the system's files (not ``/proc``, not the checkout);
- **secrets**: a clean environment (``PATH``, ``HOME``, ``LANG`` only), never the proxy's;
- **network**: a network namespace of its own with no interface up (root only), and
  Landlock's TCP rules (ABI 4+) otherwise.

What it does not isolate: without root there is no network namespace (UDP and Unix
sockets stay reachable; Landlock still refuses TCP on 6.7+ kernels); without Landlock,
files the gate's user may write stay writable; the kernel itself is shared (this is not a
virtual machine). :meth:`Sandbox.containment` says what applied on this machine.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import IO

from router.gate.graders import RunOutcome

_JAIL = Path(__file__).with_name("jail.py")
_MARK = "offload-jail:"
_SYSTEM_READ = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/opt")
_FALLBACK_PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3")
_STDERR_TAIL = 4096
NOBODY = 65534


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 10.0  # smf-bench's own limit per case
    memory_bytes: int = 1 << 30
    processes: int = 16
    file_bytes: int = 16 << 20
    open_files: int = 64


class SandboxError(RuntimeError):
    """The sandbox cannot run here (no interpreter a throwaway user can read)."""


class Sandbox:
    def __init__(self, limits: Limits = Limits(), python: str | None = None) -> None:
        self.limits = limits
        self._python = python

    @cached_property
    def python(self) -> str:
        """The interpreter the programs run in: one a throwaway user may read and run."""
        candidates = (
            [self._python]
            if self._python
            else [getattr(sys, "_base_executable", None), sys.executable, *_FALLBACK_PYTHONS]
        )
        for candidate in candidates:
            if candidate and os.path.isfile(candidate) and (os.geteuid() != 0 or _world_runnable(candidate)):
                return os.path.realpath(candidate)
        raise SandboxError(
            "no Python interpreter that the sandbox's throwaway user may run "
            f"(tried {', '.join(c for c in candidates if c)}): set gate.sandbox_python"
        )

    def containment(self) -> str:
        """What applies on this machine, e.g. ``net=namespace uid=2100012345 landlock=7``."""
        notes = self.run("pass").notes
        return notes[0] if notes else ""

    def run(self, code: str) -> RunOutcome:
        folder = Path(tempfile.mkdtemp(prefix="offload-gate-"))
        uid = _throwaway_uid() if os.geteuid() == 0 else os.geteuid()
        try:
            program = folder / "case.py"
            program.write_text(code, encoding="utf-8")
            if os.geteuid() == 0:
                os.chown(folder, uid, uid)
                os.chown(program, uid, uid)
            with tempfile.TemporaryFile() as errors:
                outcome = self._run(folder, program, uid, errors)
        finally:
            if os.geteuid() == 0:
                _kill_user(uid)
            shutil.rmtree(folder, ignore_errors=True)
        return outcome

    def _run(self, folder: Path, program: Path, uid: int, errors: IO[bytes]) -> RunOutcome:
        limits = self.limits
        settings = {
            "limits": {
                "RLIMIT_CPU": math.ceil(limits.timeout_s) + 1,
                "RLIMIT_AS": limits.memory_bytes,
                "RLIMIT_NPROC": limits.processes,
                "RLIMIT_FSIZE": limits.file_bytes,
                "RLIMIT_NOFILE": limits.open_files,
                "RLIMIT_CORE": 0,
            },
            "uid": uid,
            "dir": str(folder),
            "program": str(program),
            "python": self.python,
            "read": [*_SYSTEM_READ, str(Path(self.python).parent.parent)],
        }
        env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "TMPDIR": str(folder), "LANG": "C.UTF-8"}
        process = subprocess.Popen(
            [self.python, "-I", "-S", "-c", _JAIL.read_text(), json.dumps(settings)],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=True,
            close_fds=True,
        )
        timed_out = False
        try:
            process.wait(limits.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # the program and anything it started
            process.wait()
        stderr, notes = _read_errors(errors)
        if process.returncode == -signal.SIGXCPU:
            timed_out = True
        if timed_out:
            stderr = f"no result within {limits.timeout_s:g} s"
        return RunOutcome(process.returncode, stderr, timed_out, notes)


def _read_errors(errors: IO[bytes]) -> tuple[str, tuple[str, ...]]:
    """The tail of the program's stderr, and the jail's own first line apart."""
    errors.seek(0)
    first = errors.readline(256)
    notes: tuple[str, ...] = ()
    start = 0
    if first.startswith(_MARK.encode()):
        notes, start = (first[len(_MARK) :].decode("utf-8", "replace").strip(),), len(first)
    size = errors.seek(0, os.SEEK_END)
    errors.seek(max(start, size - _STDERR_TAIL))
    return errors.read().decode("utf-8", "replace").strip(), notes


def _throwaway_uid() -> int:
    """A user id nobody else has, so that its process count and its cleanup are this run's."""
    return 2_100_000_000 + secrets.randbelow(10_000_000)


def _world_runnable(path: str) -> bool:
    """May any user run this interpreter (every folder on its way searchable by others)?"""
    real = Path(os.path.realpath(path))
    if not real.stat().st_mode & stat.S_IXOTH:
        return False
    return all(p.stat().st_mode & stat.S_IXOTH for p in real.parents)


def _kill_user(uid: int, passes: int = 200) -> None:
    """Every process left running as ``uid`` (a program may have escaped its group). A
    fork bomb forks while it is being killed, so one sweep can miss the newest children:
    sweep until one finds nothing alive (a killed process cannot fork any more)."""
    for _ in range(passes):
        alive = _alive_as(uid)
        if not alive:
            return
        for pid in alive:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)  # let the killed ones die before the next sweep looks


def _alive_as(uid: int) -> list[int]:
    """Processes of ``uid`` that are not zombies (those are dead, waiting to be reaped)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if entry.stat().st_uid == uid and (entry / "stat").read_bytes().rpartition(b") ")[2][:1] != b"Z":
                found.append(int(entry.name))
    return found
