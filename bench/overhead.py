"""What the proxy adds over calling the upstream directly, measured in one run.

Starts a fixed-latency fake vLLM upstream and the real proxy (``offload serve``,
one worker) as separate processes, then:

1. one request at a time, for each API (Chat Completions, Responses, Messages),
   whole and streamed: added p50/p99 (proxy minus direct), and for streams
   added time to first byte. Every round sends each case once direct and once
   through the proxy (the order flips every round), so drift on the shared
   machine lands on both sides and on every API alike;
2. 32 concurrent connections, small chat requests: requests per second direct
   and proxied.

Bodies (``--bodies agent``, the default) are what coding agents send, a few KB
each: an agent's chat request (system prompt, a tool call and its output,
function tools), a Codex-like Responses request (instructions, input items
with reasoning, a function call and its output, tools) and a Claude-Code-like
Messages request (system blocks with cache_control, thinking, a tool_use and
its tool_result, tools), all on the same task. ``--bodies small`` sends one
short user turn in each API's shape instead. Usage:

    .venv/bin/python bench/overhead.py [--requests 2000] [--latency-ms 5] [--apis chat,responses,messages]
        [--bodies agent|small] [--seconds 10 | 0 to skip throughput] [--accounting | --compare-accounting]
        [--compare-admission]

``--compare-admission`` runs a second proxy whose local backend admits by expected time to
first token (``max_ttft_s``, router/forward/admission.py) beside one without, in the same
rounds: what the token account, the prefix keys and the decision cost a request.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import aiohttp
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.harness import free_port, serve_command  # noqa: E402

# The throughput run's request (and bench/upstream_client.py's).
BODY = {"model": "auto", "messages": [{"role": "user", "content": "write a function that adds two numbers"}]}

# The bound for every API: added p50 and added time to first byte.
BOUND_MS = 1.0

# ------------------------------------------------------------------ bodies
# One coding-agent turn, the same in every API: the agent ran the tests and now
# reads their output. Its last item is a tool result, so the fake answers with
# text (after thinking, where the body asks for it) in all three APIs.

SYSTEM = """You are a coding agent working in the user's repository through a terminal. You and the
user share the same workspace; work until the task is done, then summarise what you changed.

# How you work
- Read before you write: open the files involved and search with `rg` or `rg --files`, which
  are much faster than `grep -R` or `find`.
- Keep changes small and in the style of the surrounding code. Do not rename public functions,
  reformat unrelated code or add licence headers.
- Fix the root cause rather than the symptom. If a test is wrong, say why before changing it.
- Run the narrowest tests that cover your change first, then the wider suite when it is cheap.
- Never run commands that delete data, rewrite git history or reach the network unless the
  user asked for it. Ask before installing packages.
- When a command fails, read its output carefully; do not retry the same command unchanged.

# Editing files
- Use apply_patch for every edit. A patch names each file with `*** Update File: path`,
  `*** Add File: path` or `*** Delete File: path`, and each hunk shows three lines of context
  before and after the change, prefixed with a space, the removed lines with `-` and the added
  lines with `+`.
- Do not put comments in code to explain your edits; explain them in your final message.

# Final message
Be concise: what was wrong, what you changed (file paths with line numbers), and what you
verified. Mention anything you could not verify. Use backticks for paths and commands, no
headings for short answers, and no more than a few bullet points.
"""

ENVIRONMENT = """<environment_context>
  <cwd>/home/dev/src/tinyparse</cwd>
  <approval_policy>on-request</approval_policy>
  <sandbox_mode>workspace-write</sandbox_mode>
  <network_access>restricted</network_access>
  <shell>bash</shell>
</environment_context>"""

TASK = (
    "The parser tests started failing after I refactored the tokenizer into its own module "
    "(tinyparse/tokens.py). Find out why and fix it; keep the public API of tinyparse.parse unchanged."
)

TEST_COMMAND = "python -m pytest -q tests/test_parser.py"

TEST_OUTPUT = """..F.F...                                                                  [100%]
=================================== FAILURES ===================================
___________________________ test_nested_expressions ____________________________

    def test_nested_expressions():
>       tree = parse("(1 + (2 * 3)) - 4")

tests/test_parser.py:41:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
tinyparse/parser.py:88: in parse
    return Parser(tokenize(text)).expression()
tinyparse/parser.py:52: in expression
    left = self.term()
tinyparse/parser.py:61: in term
    factor = self.factor()
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

self = <tinyparse.parser.Parser object at 0x7f3a2c1d9e50>

    def factor(self):
        token = self.advance()
        if token.kind == "LPAREN":
            node = self.expression()
>           self.expect("RPAREN")
E           tinyparse.errors.ParseError: expected RPAREN at offset 12, got EOF

tinyparse/parser.py:74: ParseError
______________________________ test_unary_minus ________________________________

    def test_unary_minus():
>       assert evaluate(parse("-(3 - 5)")) == 2
E       tinyparse.errors.ParseError: expected RPAREN at offset 7, got EOF

tests/test_parser.py:58: ParseError
=========================== short test summary info ============================
FAILED tests/test_parser.py::test_nested_expressions - tinyparse.errors.ParseError: expected RPAREN...
FAILED tests/test_parser.py::test_unary_minus - tinyparse.errors.ParseError: expected RPAREN at of...
2 failed, 6 passed in 0.09s
"""

THOUGHT = (
    "Both failures end in EOF right where a closing parenthesis should be, so the tokenizer probably "
    "drops the last token when the input ends with a delimiter. Run the parser tests first."
)


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _string(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


# Codex-style tools (and the chat agent's, as chat functions).
SHELL = (
    "shell",
    "Runs a shell command and returns its output. Always set workdir; prefer `rg` for searching.",
    _schema(
        {
            "command": {"type": "array", "items": {"type": "string"}, "description": "argv to execute"},
            "workdir": _string("the working directory to execute the command in"),
            "timeout_ms": {"type": "number", "description": "the timeout for the command in milliseconds"},
            "justification": _string("why the command needs to run outside the sandbox, if it does"),
        },
        ["command"],
    ),
)
APPLY_PATCH = (
    "apply_patch",
    "Edits files with a patch in the apply_patch format: '*** Begin Patch', then one or more "
    "'*** Update File:', '*** Add File:' or '*** Delete File:' sections with @@ hunks, then "
    "'*** End Patch'. Paths are relative to the working directory.",
    _schema({"input": _string("the entire contents of the apply_patch command")}, ["input"]),
)
UPDATE_PLAN = (
    "update_plan",
    "Updates the task plan. Provide an optional explanation and a list of plan items, each with a "
    "step and status. At most one step can be in_progress at a time.",
    _schema(
        {
            "explanation": {"type": "string"},
            "plan": {
                "type": "array",
                "items": _schema(
                    {
                        "step": {"type": "string"},
                        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                    },
                    ["step", "status"],
                ),
            },
        },
        ["plan"],
    ),
)
VIEW_IMAGE = (
    "view_image",
    "Attaches a local image (by filesystem path) to the conversation context for this turn.",
    _schema({"path": _string("local filesystem path to an image file")}, ["path"]),
)
CODEX_TOOLS = (SHELL, APPLY_PATCH, UPDATE_PLAN, VIEW_IMAGE)
SHELL_ARGUMENTS = orjson.dumps(
    {"command": ["bash", "-lc", TEST_COMMAND], "workdir": "/home/dev/src/tinyparse", "timeout_ms": 120000}
).decode()

# Claude-Code-style tools.
CLAUDE_TOOLS = (
    (
        "Bash",
        "Executes a bash command in a persistent shell session with an optional timeout. Use it for "
        "terminal operations such as git, tests and builds, not for reading or editing files: use the "
        "dedicated tools for those. Quote paths that contain spaces.",
        _schema(
            {
                "command": _string("The command to execute"),
                "timeout": {"type": "number", "description": "Optional timeout in milliseconds (max 600000)"},
                "description": _string("Clear, concise description of what this command does in 5-10 words"),
                "run_in_background": {"type": "boolean", "description": "Run the command in the background"},
            },
            ["command"],
        ),
    ),
    (
        "Read",
        "Reads a file from the local filesystem. The file_path must be absolute. By default it reads up "
        "to 2000 lines from the start; results are returned with line numbers starting at 1.",
        _schema(
            {
                "file_path": _string("The absolute path to the file to read"),
                "offset": {"type": "number", "description": "The line number to start reading from"},
                "limit": {"type": "number", "description": "The number of lines to read"},
            },
            ["file_path"],
        ),
    ),
    (
        "Edit",
        "Performs exact string replacements in files. You must read the file before editing it. The edit "
        "fails if old_string is not unique in the file unless replace_all is set.",
        _schema(
            {
                "file_path": _string("The absolute path to the file to modify"),
                "old_string": _string("The text to replace"),
                "new_string": _string("The text to replace it with (must be different from old_string)"),
                "replace_all": {"type": "boolean", "default": False},
            },
            ["file_path", "old_string", "new_string"],
        ),
    ),
    (
        "Grep",
        "A powerful search tool built on ripgrep. Supports full regex syntax, filtering by glob or file "
        "type, and output modes content, files_with_matches (default) and count.",
        _schema(
            {
                "pattern": _string("The regular expression pattern to search for in file contents"),
                "path": _string("File or directory to search in. Defaults to the current working directory."),
                "glob": _string('Glob pattern to filter files (e.g. "*.js")'),
                "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]},
            },
            ["pattern"],
        ),
    ),
    (
        "TodoWrite",
        "Creates and manages a structured task list for the current session, to track progress and show "
        "the user what is being worked on.",
        _schema(
            {
                "todos": {
                    "type": "array",
                    "items": _schema(
                        {
                            "content": {"type": "string", "minLength": 1},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                            "activeForm": {"type": "string", "minLength": 1},
                        },
                        ["content", "status", "activeForm"],
                    ),
                }
            },
            ["todos"],
        ),
    ),
)


def chat_body(small: bool) -> dict[str, Any]:
    if small:
        return dict(BODY)
    return {
        "model": "auto",
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"{ENVIRONMENT}\n\n{TASK}"},
            {
                "role": "assistant",
                "content": THOUGHT,
                "tool_calls": [
                    {
                        "id": "call_8KqT3bWz1yXh",
                        "type": "function",
                        "function": {"name": "shell", "arguments": SHELL_ARGUMENTS},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_8KqT3bWz1yXh", "content": TEST_OUTPUT},
        ],
        "tools": [
            {"type": "function", "function": {"name": n, "description": d, "parameters": p}}
            for n, d, p in CODEX_TOOLS
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "temperature": 0.2,
    }


def responses_body(small: bool) -> dict[str, Any]:
    """What Codex sends a custom provider: no max_output_tokens, store false, the whole history."""
    if small:
        return {"model": "auto", "input": BODY["messages"][0]["content"]}
    return {
        "model": "gpt-5.1-codex",
        "instructions": SYSTEM,
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ENVIRONMENT}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": TASK}]},
            {
                "type": "reasoning",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": THOUGHT}],
                "encrypted_content": None,
            },
            {
                "type": "function_call",
                "name": "shell",
                "arguments": SHELL_ARGUMENTS,
                "call_id": "call_8KqT3bWz",
            },
            {"type": "function_call_output", "call_id": "call_8KqT3bWz", "output": TEST_OUTPUT},
        ],
        "tools": [
            {"type": "function", "name": n, "description": d, "strict": False, "parameters": p}
            for n, d, p in CODEX_TOOLS
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "0199e3c2-7a51-7d43-9b8e-5f2c1d0a6b3e",
        "text": {"verbosity": "medium"},
    }


def messages_body(small: bool) -> dict[str, Any]:
    """What Claude Code sends: system blocks with cache_control, thinking, tool_use and tool_result."""
    if small:
        return {"model": "auto", "max_tokens": 1024, "messages": BODY["messages"]}
    cached = {"type": "ephemeral"}
    return {
        "model": "claude-sonnet-4-5-20250929",
        "max_tokens": 32000,
        "system": [
            {
                "type": "text",
                "text": "You are Claude Code, an interactive CLI coding agent.",
                "cache_control": cached,
            },
            {"type": "text", "text": SYSTEM, "cache_control": cached},
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"<system-reminder>\n{ENVIRONMENT}\n</system-reminder>"},
                    {"type": "text", "text": TASK},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": THOUGHT},
                    {
                        "type": "tool_use",
                        "id": "toolu_01HqX7bK2mVt9",
                        "name": "Bash",
                        "input": {"command": TEST_COMMAND, "description": "Run the parser tests"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01HqX7bK2mVt9", "content": TEST_OUTPUT},
                ],
            },
        ],
        "tools": [{"name": n, "description": d, "input_schema": p} for n, d, p in CLAUDE_TOOLS],
        "thinking": {"type": "enabled", "budget_tokens": 10000},
        "metadata": {"user_id": "user_3f9a1c_account__session_0199e3c2-7a51-7d43"},
    }


@dataclass(frozen=True)
class Api:
    path: str  # appended to the host root
    body: Any  # (small: bool) -> dict
    end: bytes  # how a complete stream's last event starts
    headers: dict[str, str] = field(default_factory=dict)


APIS = {
    "chat": Api("/v1/chat/completions", chat_body, b"data: [DONE]"),
    "responses": Api(
        "/v1/responses",
        responses_body,
        b"event: response.completed",
        {"session_id": "0199e3c2-7a51-7d43-9b8e-5f2c1d0a6b3e"},
    ),
    "messages": Api(
        "/v1/messages?beta=true",  # as Claude Code posts it
        messages_body,
        b"event: message_stop",
        {
            "anthropic-version": "2023-06-01",
            "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
        },
    ),
}

# ------------------------------------------------------------------ processes


def start(cmd: list[str], port: int, log: IO[bytes] | None = None) -> subprocess.Popen[bytes]:
    """Start a server process and wait until its port accepts connections. Its stderr goes to
    ``log`` when given: a long run's log lines would fill a pipe nobody reads and stall it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    stderr = log if log is not None else subprocess.PIPE
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc
        except OSError:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"{cmd[:4]} exited: {err[-2000:]}") from None
            time.sleep(0.05)
    raise RuntimeError(f"{cmd[:4]} did not start")


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """Terminate the servers; one that is still draining after 30 s is killed (its figures
    were read already)."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def proxy_config(upstream: str, accounting: bool, tmp: Path, admission: bool = False) -> Path:
    """``admission``: the local backend admits by expected time to first token (max_ttft_s),
    with the Spark's rates to start from (docs/admission.md)."""
    db = (
        {"url": f"sqlite:///{tmp / 'bench.db'}", "spool_path": str(tmp / "spool.jsonl")} if accounting else {}
    )
    local: dict[str, Any] = {"kind": "vllm", "base_url": upstream, "model": "m", "max_concurrency": 1024}
    if admission:
        local.update({"max_ttft_s": 30, "prefill_tps": 700, "decode_tps": 20})
    config = {
        "database": {"enabled": accounting, **db},
        "backends": {"local": local},
        "routing": {"default": "local"},
    }
    path = tmp / "bench.yaml"
    path.write_text(orjson.dumps(config).decode())  # JSON is YAML
    return path


# ------------------------------------------------------------------ timing


async def one(
    session: aiohttp.ClientSession,
    url: str,
    body: bytes,
    stream: bool,
    headers: dict[str, str] | None = None,
    end: bytes = b"data: [DONE]",
) -> tuple[float, float]:
    """(time to first byte, total) in seconds; a stream must end with ``end``'s event."""
    t0 = time.perf_counter()
    sent = {"Content-Type": "application/json", **(headers or {})}
    async with session.post(url, data=body, headers=sent) as resp:
        if stream:
            first = await resp.content.readany()
            t1 = time.perf_counter()
            rest = await resp.read()
            data = first + rest
            last = data.rstrip(b"\n").rsplit(b"\n\n", 1)[-1]
            assert last.startswith(end), data[-200:]
        else:
            data = await resp.read()
            t1 = time.perf_counter()
        assert resp.status == 200, data[:300]
    return t1 - t0, time.perf_counter() - t0


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


@dataclass
class Case:
    """One API, whole or streamed: its request and, per path, the times measured."""

    api: str
    stream: bool
    body: bytes
    headers: dict[str, str]
    end: bytes
    urls: dict[str, str]  # path name ("direct", "proxy"...) -> URL
    ttfb: dict[str, list[float]] = field(default_factory=dict)
    total: dict[str, list[float]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.api} {'stream' if self.stream else 'whole'}"


def cases_for(apis: list[str], roots: dict[str, str], small: bool) -> list[Case]:
    cases = []
    for name in apis:
        api = APIS[name]
        for stream in (False, True):
            body = orjson.dumps({**api.body(small), "stream": stream})
            urls = {path: root + api.path for path, root in roots.items()}
            cases.append(Case(name, stream, body, api.headers, api.end, urls))
    return cases


async def sequential(cases: list[Case], n: int, warmup: int = 50) -> None:
    """``n`` rounds; each sends every case once on every path, one request at a time,
    the paths in the opposite order every other round."""
    async with aiohttp.ClientSession() as session:
        for i in range(warmup + n):
            for case in cases:
                names = list(case.urls) if i % 2 == 0 else list(reversed(case.urls))
                for name in names:
                    a, b = await one(session, case.urls[name], case.body, case.stream, case.headers, case.end)
                    if i >= warmup:
                        case.ttfb.setdefault(name, []).append(a)
                        case.total.setdefault(name, []).append(b)


def summary(case: Case, name: str) -> dict[str, float]:
    """Path ``name`` against direct, in milliseconds (and a ratio)."""
    ms = 1000.0
    base, mine = case.total["direct"], case.total[name]
    out = {
        "direct_p50_ms": pct(base, 50) * ms,
        "p50_ms": pct(mine, 50) * ms,
        "added_p50_ms": (pct(mine, 50) - pct(base, 50)) * ms,
        "added_p99_ms": (pct(mine, 99) - pct(base, 99)) * ms,
        "added_mean_ms": (statistics.fmean(mine) - statistics.fmean(base)) * ms,
        "ratio_p50": pct(mine, 50) / pct(base, 50),
    }
    if case.stream:
        first, direct_first = case.ttfb[name], case.ttfb["direct"]
        out["added_ttfb_p50_ms"] = (pct(first, 50) - pct(direct_first, 50)) * ms
        out["added_ttfb_p99_ms"] = (pct(first, 99) - pct(direct_first, 99)) * ms
    return out


def report(cases: list[Case]) -> dict[str, dict[str, float]]:
    """Print one line per case and proxy; return the figures by "case/proxy"."""
    results: dict[str, dict[str, float]] = {}
    proxies = [name for name in cases[0].urls if name != "direct"]
    width = 18 if proxies == ["proxy"] else 20 + max(map(len, proxies))
    head = (
        f"  {'':{width}s} {'direct p50':>10s} {'proxy p50':>10s} {'added p50':>10s} {'p99':>8s} {'mean':>8s}"
    )
    print(head + f" {'added TTFB p50':>15s} {'p99':>8s}")
    over = []
    for case in cases:
        for name in case.urls:
            if name == "direct":
                continue
            s = summary(case, name)
            results[f"{case.api}_{'stream' if case.stream else 'whole'}/{name}"] = s
            label = case.label if name == "proxy" else f"{case.label} ({name})"
            line = (
                f"  {label:{width}s} {s['direct_p50_ms']:10.3f} {s['p50_ms']:10.3f} {s['added_p50_ms']:+10.3f}"
                f" {s['added_p99_ms']:+8.3f} {s['added_mean_ms']:+8.3f}"
            )
            if case.stream:
                line += f" {s['added_ttfb_p50_ms']:+15.3f} {s['added_ttfb_p99_ms']:+8.3f}"
            print(line)
            if s["added_p50_ms"] > BOUND_MS or s.get("added_ttfb_p50_ms", 0.0) > BOUND_MS:
                over.append(label)
    verdict = f"over {BOUND_MS:g} ms: {', '.join(over)}" if over else "all within"
    print(f"  (ms; bound: added p50 and added TTFB p50 <= {BOUND_MS:g} ms; {verdict})")
    return results


class OtherLoad:
    """How much CPU other processes used while this runs (Linux ``/proc``): the shared
    machine's noise, printed next to the figures so a busy run can be told apart."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = [os.getpid(), *pids]
        self.start = self._read()

    def _read(self) -> tuple[int, int, int] | None:
        try:
            with open("/proc/stat") as f:
                fields = [int(x) for x in f.readline().split()[1:9]]
            own = 0
            for pid in self.pids:
                with open(f"/proc/{pid}/stat") as f:
                    stat = f.read().rsplit(")", 1)[1].split()
                own += int(stat[11]) + int(stat[12])  # utime, stime
        except (OSError, ValueError, IndexError):
            return None
        idle = fields[3] + fields[4]
        return sum(fields) - idle, sum(fields), own

    def cores(self) -> float | None:
        """Other processes' CPU since the start, in cores (of ``os.cpu_count()``)."""
        end = self._read()
        if end is None or self.start is None:
            return None
        busy, total, own = (b - a for a, b in zip(self.start, end, strict=True))
        wall = total / (os.cpu_count() or 1)
        return max(0.0, busy - own) / wall if wall else None


async def throughput(url: str, concurrency: int, seconds: float) -> float:
    body = orjson.dumps(BODY)
    done = 0
    stop = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            nonlocal done
            while time.perf_counter() < stop:
                await one(session, url, body, False)
                done += 1

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return done / (time.perf_counter() - t0)


async def configure_fake(root: str) -> None:
    """Chat's replies follow the other APIs' rule (a tool result gets text, not another call),
    so every API answers the same turn with the same reply."""
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{root}/_fake/config", json={"chat_always_calls": False}) as resp,
    ):
        assert resp.status == 200, await resp.text()


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=2000, help="rounds: requests per case and path")
    parser.add_argument("--latency-ms", type=float, default=5.0, help="the fake upstream's fixed latency")
    parser.add_argument(
        "--apis", default="chat,responses,messages", help="comma-separated: chat, responses, messages"
    )
    parser.add_argument("--bodies", choices=("agent", "small"), default="agent")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="duration of each throughput run (0: skip them)"
    )
    parser.add_argument("--accounting", action="store_true", help="run the proxy with SQLite accounting on")
    parser.add_argument(
        "--compare-accounting",
        action="store_true",
        help="two proxies, accounting off and on, in the same run",
    )
    parser.add_argument(
        "--compare-admission",
        action="store_true",
        help="two proxies, the local backend without and with max_ttft_s, in the same run",
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    opts = parser.parse_args()
    apis = [a.strip() for a in opts.apis.split(",") if a.strip()]
    unknown = set(apis) - set(APIS)
    if unknown:
        parser.error(f"unknown API(s): {', '.join(sorted(unknown))}")

    up_port = free_port()
    tmp = Path(tempfile.mkdtemp(prefix="offload-bench-"))
    fake = start(
        [
            sys.executable, "-m", "router.fake.upstream", "--port", str(up_port), "--mode", "vllm",
            "--first-byte-delay", str(opts.latency_ms / 1000),
        ],
        up_port,
    )  # fmt: skip
    up_root = f"http://127.0.0.1:{up_port}"
    procs = [fake]
    roots = {"direct": up_root}
    variants = {"proxy": (opts.accounting, False)}  # name → (accounting, admission by tokens)
    if opts.compare_accounting:
        variants = {"proxy": (False, False), "proxy_acct": (True, False)}
    elif opts.compare_admission:
        variants = {"proxy": (opts.accounting, False), "proxy_ttft": (opts.accounting, True)}
    try:
        await configure_fake(up_root)
        for name, (accounting, admission) in variants.items():
            port = free_port()
            work = tmp / name
            work.mkdir()
            config = proxy_config(f"{up_root}/v1", accounting, work, admission)
            cmd = serve_command(config, port)
            procs.append(start(cmd, port))
            roots[name] = f"http://127.0.0.1:{port}"
        mode = "compared" if opts.compare_accounting else ("on" if opts.accounting else "off")
        mode += "; admission by tokens compared" if opts.compare_admission else ""
        cases = cases_for(apis, roots, opts.bodies == "small")
        sizes = ", ".join(f"{c.api} {len(c.body):,} B" for c in cases if c.stream)
        print(
            f"fake upstream latency {opts.latency_ms} ms; accounting {mode}; {opts.bodies} bodies ({sizes})"
        )
        print(f"\none at a time, {opts.requests} rounds, every case direct and proxied in each round:")
        load = OtherLoad([p.pid for p in procs])
        await sequential(cases, opts.requests)
        results: dict[str, Any] = {"latency_ms": opts.latency_ms, "bodies": opts.bodies, **report(cases)}
        others = load.cores()
        if others is not None:
            print(f"  other processes used {others:.2f} of {os.cpu_count()} cores meanwhile")
            results["other_cores"] = others
        if opts.seconds > 0:
            print(f"\n{opts.concurrency} concurrent connections, small chat, whole, {opts.seconds:g} s each:")
            rps = {
                name: await throughput(root + APIS["chat"].path, opts.concurrency, opts.seconds)
                for name, root in roots.items()
            }
            for name, value in rps.items():
                print(f"  {name + '_rps':32s} {value:8.0f}   ratio to direct {value / rps['direct']:.3f}")
            results["rps"] = rps
        if opts.json:
            opts.json.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    finally:
        stop(list(reversed(procs)))


if __name__ == "__main__":
    asyncio.run(main())
