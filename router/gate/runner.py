"""Send cases through the proxy's own forwarding, in process, and grade the answers.

The gate builds the proxy app from the config (``router.app.create_app``) and speaks to it
over its HTTP surface through httpx's ASGI transport: the same auth, policy override,
backend adaptation (``extra_body``, thinking), streaming and accounting as any agent's
request, with no port opened. Each request carries ``x-offload-route: <backend or arm>``
and ``x-offload-gate: <run id>``, under a one-off admin key of its own, so its usage row is
marked and left out of the month's report. An answer that a fallback served is an error:
it is not evidence about the backend asked for.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

import httpx
import orjson

from router.config import ClientKey, Config
from router.gate.graders import Answer, CodeRunner, Verdict, answer_from_chat, grade
from router.gate.store import Result, fingerprint
from router.gate.suites import Case

GATE_HEADER = "x-offload-gate"
GATE_KEY_NAME = "offload-gate"


class TargetError(ValueError):
    """A backend or arm the gate cannot run against; the message says why."""


@dataclass(frozen=True)
class Target:
    name: str  # what answers: the backend, or its arm
    backend: str
    route: str
    model: str
    recipe_hash: str


def resolve_target(config: Config, backend: str, arm: str | None = None) -> Target:
    names = ", ".join(config.backends)
    if backend not in config.backends:
        raise TargetError(f"--backend {backend!r}: no such backend (configured: {names})")
    if arm is not None:
        found = config.backends.get(arm)
        if found is None or found.variant_of != backend:
            arms = [n for n, b in config.backends.items() if b.variant_of == backend]
            raise TargetError(
                f"--arm {arm!r}: not a variant of {backend!r} (its arms: {', '.join(arms) or 'none'})"
            )
    name = arm or backend
    chosen = config.backends[name]
    if "chat" not in chosen.served_apis:
        raise TargetError(f"{name}: serves {', '.join(chosen.served_apis)}; the gate speaks Chat Completions")
    if chosen.api_key_env and not chosen.api_key:
        raise TargetError(f"{name}: not configured: set {chosen.api_key_env}")
    return Target(name, backend, chosen.route_name, chosen.model, fingerprint(config, name))


def gate_config(config: Config) -> tuple[Config, str]:
    """The config the in-process proxy runs with: a one-off admin key for the gate, no shadow
    runs (a gate request is not traffic to learn from), a spool of its own."""
    key = secrets.token_urlsafe(32)
    auth = config.auth.model_copy(
        update={"admin_keys": [*config.auth.admin_keys, ClientKey(name=GATE_KEY_NAME, key=key)]}
    )
    shadow = config.routing.shadow_runs.model_copy(update={"enabled": False})
    routing = config.routing.model_copy(update={"shadow_runs": shadow})
    database = config.database.model_copy(update={"spool_path": config.database.spool_path + ".gate"})
    return config.model_copy(update={"auth": auth, "routing": routing, "database": database}), key


def request_body(case: Case, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "auto",
        "messages": [{"role": "user", "content": case.prompt}],
        "max_tokens": case.max_tokens,
    }
    if case.temperature is not None:
        body["temperature"] = case.temperature
    tools = case.option("tools")
    if tools:
        body["tools"] = tools
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


class Progress:
    """One line on stderr: done/total, a bar, and the tallies so far (a line per tenth when
    stderr is not a terminal)."""

    def __init__(self, total: int, out: TextIO | None = None) -> None:
        self.total, self.done, self.out = total, 0, out if out is not None else sys.stderr
        self.counts = {"pass": 0, "fail": 0, "error": 0}
        self._tty = self.out.isatty()
        self._step = max(1, total // 10)

    def update(self, verdict: Verdict) -> None:
        self.done += 1
        self.counts[verdict.status] += 1
        if not self._tty and self.done % self._step and self.done != self.total:
            return
        filled = int(30 * self.done / self.total)
        c = self.counts
        line = f"{self.done:>4}/{self.total} [{'#' * filled}{'.' * (30 - filled)}] pass {c['pass']} fail {c['fail']} error {c['error']}"
        self.out.write(
            ("\r" if self._tty else "") + line + ("" if self._tty and self.done < self.total else "\n")
        )
        self.out.flush()


async def run_cases(
    config: Config,
    target: Target,
    cases: list[Case],
    run_id: str,
    *,
    concurrency: int = 4,
    stream: bool = False,
    run_code: CodeRunner | None = None,
    on_result: Callable[[Verdict], None] | None = None,
) -> list[Result]:
    """Every case through the proxy to ``target``, graded; in the cases' order."""
    from router.app import create_app  # the proxy itself: imported when a run starts

    proxied, key = gate_config(config)
    app = create_app(proxied)
    headers = {"authorization": f"Bearer {key}", "x-offload-route": target.name, GATE_HEADER: run_id}
    transport = httpx.ASGITransport(app=app)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(client: httpx.AsyncClient, case: Case) -> Result:
        async with gate:
            started = time.perf_counter()
            answer, verdict = await _ask(client, case, target, stream)
            if verdict is None:
                verdict = await _graded(case, answer, run_code)
            if on_result is not None:
                on_result(verdict)
            return Result(case.id, case.category, case.difficulty, case.evaluator, verdict.status,
                          verdict.score, verdict.detail[:2000], time.perf_counter() - started, answer.tokens)  # fmt: skip

    async with (
        app.app.router.lifespan_context(app.app),
        httpx.AsyncClient(
            transport=transport, base_url="http://offload-gate", headers=headers, timeout=None
        ) as client,
    ):
        return list(await asyncio.gather(*(one(client, case) for case in cases)))


async def _graded(case: Case, answer: Answer, run_code: CodeRunner | None) -> Verdict:
    """The verdict; a grader that breaks is an error of this case, never of the whole run."""
    try:
        if case.runs_code:
            return await asyncio.to_thread(grade, case, answer, run_code)
        return grade(case, answer)
    except Exception as exc:
        return Verdict.error(f"grading failed: {type(exc).__name__}")


async def _ask(
    client: httpx.AsyncClient, case: Case, target: Target, stream: bool
) -> tuple[Answer, Verdict | None]:
    """The answer, or an error verdict when there is none to grade."""
    body = request_body(case, stream)
    try:
        if stream:
            async with client.stream("POST", "/v1/chat/completions", json=body) as response:
                if response.status_code != 200:
                    await response.aread()
                    return Answer(), _http_error(response)
                served = _served_elsewhere(response, target)
                answer, error = await read_stream(response)
        else:
            response = await client.post("/v1/chat/completions", json=body)
            if response.status_code != 200:
                return Answer(), _http_error(response)
            served = _served_elsewhere(response, target)
            answer, error = answer_from_chat(response.json()), None
    except (httpx.HTTPError, ValueError) as exc:
        return Answer(), Verdict.error(f"no answer: {type(exc).__name__}")
    if served:
        return answer, Verdict.error(served)
    return answer, (Verdict.error(error) if error else None)


def _served_elsewhere(response: httpx.Response, target: Target) -> str | None:
    served = response.headers.get("x-offload-route")
    if response.headers.get("x-offload-fallback") == "1" or served != target.name:
        return f"answered by {served} (a fallback), not {target.name}"
    return None


def _http_error(response: httpx.Response) -> Verdict:
    try:
        error = response.json().get("error") or {}
        message = error.get("message") if isinstance(error, dict) else str(error)
    except ValueError:
        message = None
    return Verdict.error(f"HTTP {response.status_code}: {str(message or response.reason_phrase)[:300]}")


async def read_stream(response: httpx.Response) -> tuple[Answer, str | None]:
    """A Chat Completions stream as one answer: text, reasoning and tool calls put together
    (a call's id and name come in its first fragment, its arguments across several)."""
    text: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    tokens = 0
    async for line in response.aiter_lines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        chunk = orjson.loads(data)
        if "error" in chunk:
            error = chunk["error"]
            return (
                Answer("".join(text)),
                f"stream ended in error: {str(error.get('message') if isinstance(error, dict) else error)[:300]}",
            )
        tokens = int((chunk.get("usage") or {}).get("completion_tokens") or tokens)
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            text.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning_content") or delta.get("reasoning") or "")
            for call in delta.get("tool_calls") or ():
                into = calls.setdefault(int(call.get("index", 0)), {"name": "", "arguments": ""})
                fn = call.get("function") or {}
                into["name"] += fn.get("name") or ""
                into["arguments"] += fn.get("arguments") or ""
    ordered = tuple(calls[i] for i in sorted(calls))
    return Answer("".join(text), "".join(reasoning), ordered, tokens), None


def new_run_id() -> str:
    return os.urandom(6).hex()
