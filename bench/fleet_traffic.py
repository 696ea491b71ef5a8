"""The seeded traffic of bench/fleet.py: agent sessions shaped like Claude Code, Codex and a chat agent.

Every session of a kind sends its client's tools and system prompt unchanged, then its
whole history every turn. What a real client adds is here too: Claude Code's
``x-claude-code-session-id`` header and its billing-header block, whose ``cch=`` is new on
every request (the proxy strips it for vLLM backends unless ``strip_billing_header:
false``); Codex's ``session-id`` header and ``prompt_cache_key``. With ``asks`` on, one turn
in six is a question the user types (``model: auto``, no team rule: the classifier
decides), drawn from :data:`ASKS`.

The traffic depends only on the seed: the assistant's reply is as long as the turn asked
for, whatever answered it, so every mode of one run replays the same bytes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from router.fake.spark import render_prompt
from router.fake.spark_engine import BLOCK_SIZE, block_hashes

WORDS = [
    "def",
    "class",
    "return",
    "import",
    "self",
    "value",
    "index",
    "error",
    "path",
    "file",
    "test",
    "assert",
    "config",
    "request",
    "token",
    "cache",
    "stream",
    "buffer",
    "parse",
    "result",
    "async",
    "await",
    "yield",
    "lambda",
    "dict",
    "list",
    "tuple",
    "none",
]

# Questions a user types between tool loops, in three kinds: what the classifier should
# keep on the box, what it should send to the cloud, and ones near its boundary.
ASKS = {
    "coding": [
        "The test for the parser still fails after that edit. Look at the traceback and fix the off-by-one in the loop.",
        "Rename the helper to load_config and update every caller in the package.",
        "Add a unit test for the empty-file case of read_records and make it pass.",
        "Refactor the retry loop into a small function with a typed signature.",
        "Why does mypy complain about the return type here? Fix the annotation.",
        "Make the CLI accept a --dry-run flag that prints the plan without writing files.",
        "The lint step fails on an unused import in the cache module; clean it up.",
        "Split this 200-line function into three smaller ones without changing behaviour.",
    ],
    "math": [
        "Prove that the sum of the first n odd numbers is n squared, step by step.",
        "If a queue receives 40 requests a second and serves 50, what is the mean wait under M/M/1? Show the derivation.",
        "Compute the eigenvalues of the matrix [[2, 1], [1, 2]] and explain what they mean geometrically.",
        "What is the probability that two of 23 people share a birthday? Derive it.",
        "Solve the recurrence T(n) = 2T(n/2) + n log n and justify each step.",
    ],
    "borderline": [
        "Estimate the time complexity of this cache eviction code and say whether it is optimal.",
        "Explain in a paragraph why the benchmark's p95 moved, then suggest what to measure next.",
        "Is a bloom filter a good fit for the dedup step? Reason about the false-positive rate first.",
        "Write a short design note comparing consistent hashing with a lookup table for this router.",
    ],
}
ASK_WEIGHTS = {"coding": 5, "math": 3, "borderline": 2}


def text(rng: random.Random, tokens: int) -> str:
    """About ``tokens`` tokens of code-like text (the box counts four bytes a token)."""
    out: list[str] = []
    size = 0
    while size < tokens * 4:
        word = rng.choice(WORDS) + rng.choice(("", "_", ".", "(", " ", "\n")) + str(rng.randint(0, 999))
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


@dataclass
class Session:
    index: int
    kind: str  # claude | codex | chat
    start: float  # simulated seconds
    turns: int
    rng: random.Random
    history: list[Any] = field(default_factory=list)
    id: str = ""  # the client's session id (Claude Code and Codex send one)
    blocks: list[bytes] = field(default_factory=list)  # the last turn's prompt, as block hashes

    @property
    def api(self) -> str:
        return {"claude": "messages", "codex": "responses", "chat": "chat"}[self.kind]

    def think(self) -> float:
        return self.rng.uniform(20, 90) if self.kind == "chat" else self.rng.uniform(2, 15)

    def user_turn(self, first: bool) -> str:
        if first:  # the task; a per-session marker lets the boxes tell sessions apart
            size = self.rng.randint(1500, 6000) if self.kind == "chat" else 2000
            return f"[task {self.index}] " + text(self.rng, size)
        if self.kind == "chat":
            return text(self.rng, self.rng.randint(300, 3000))
        # A tool result: mostly small (a grep, an edit, a test run), sometimes a file or a log.
        size = self.rng.choices(((200, 1000), (1000, 3000), (3000, 8000)), weights=(6, 3, 1))[0]
        return text(self.rng, self.rng.randint(*size))

    def ask(self) -> str:
        kind = self.rng.choices(list(ASK_WEIGHTS), weights=list(ASK_WEIGHTS.values()))[0]
        return self.rng.choice(ASKS[kind])

    def headers(self) -> dict[str, str]:
        if self.kind == "claude":
            return {"x-claude-code-session-id": self.id}
        return {"session-id": self.id} if self.kind == "codex" else {}


@dataclass(frozen=True)
class Shared:
    """What every session of a kind sends unchanged: its client's tools and system prompt."""

    claude_tools: list[dict[str, Any]]
    claude_system: str
    codex_tools: list[dict[str, Any]]
    codex_instructions: str
    chat_system: str

    @classmethod
    def make(cls, rng: random.Random) -> Shared:
        def tools(n: int, tokens: int, anthropic: bool) -> list[dict[str, Any]]:
            out = []
            for i in range(n):
                schema = {"type": "object", "properties": {"arg": {"type": "string"}}}
                desc = text(rng, tokens // n)
                if anthropic:
                    out.append({"name": f"tool_{i}", "description": desc, "input_schema": schema})
                else:
                    out.append(
                        {"type": "function", "name": f"tool_{i}", "description": desc, "parameters": schema}
                    )
            return out

        return cls(
            tools(16, 12_000, True), text(rng, 4000), tools(8, 3000, False), text(rng, 5000), text(rng, 3000)
        )


def billing_block(rng: random.Random) -> dict[str, str]:
    """Claude Code's first system block, its ``cch`` new on every request."""
    cch = f"{rng.getrandbits(20):05x}"
    return {
        "type": "text",
        "text": f"x-anthropic-billing-header: cc_version=2.1.3.abc; cc_entrypoint=cli; cch={cch};",
    }


def body(session: Session, shared: Shared, env: str, out_tokens: int, model: str | None) -> dict[str, Any]:
    """One turn's request; ``model`` ``auto`` lets the classifier decide, None is the client's own."""
    if session.kind == "claude":
        system = [
            billing_block(session.rng),
            {"type": "text", "text": shared.claude_system},
            {"type": "text", "text": env},
        ]
        return {
            "model": model or "claude-sonnet-4-5",
            "max_tokens": out_tokens,
            "stream": True,
            "system": system,
            "tools": shared.claude_tools,
            "messages": session.history,
            "metadata": {"user_id": f'{{"session_id": "{session.id}"}}'},
        }
    if session.kind == "codex":
        return {
            "model": model or "gpt-5.1-codex",
            "instructions": shared.codex_instructions + env,
            "tools": shared.codex_tools,
            "input": session.history,
            "stream": True,
            "store": False,
            "prompt_cache_key": session.id,
            "max_output_tokens": out_tokens,
        }
    return {
        "model": "auto",
        "messages": [{"role": "system", "content": shared.chat_system}, *session.history],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": out_tokens,
    }


def add_turn(session: Session, role: str, content: str) -> None:
    if session.kind == "codex":
        kind = "input_text" if role == "user" else "output_text"
        session.history.append(
            {"type": "message", "role": role, "content": [{"type": kind, "text": content}]}
        )
    else:
        session.history.append({"role": role, "content": content})


def as_the_box_sees(session: Session, payload: dict[str, Any]) -> list[bytes]:
    """The turn's prompt in the simulated Spark's block hashes, billing header stripped
    (what vLLM sees when the proxy keeps the prefix cache working)."""
    if session.kind == "claude":
        payload = {**payload, "system": payload["system"][1:]}
    return block_hashes(render_prompt(session.api, payload))[1]


def reusable(blocks: list[bytes], before: list[bytes]) -> int:
    """Tokens of ``blocks`` a box holding ``before`` could serve from its prefix cache: the
    common leading blocks, less the last block (vLLM computes at least one token)."""
    same = 0
    for mine, theirs in zip(blocks[: max(0, len(blocks) - 1)], before, strict=False):
        if mine != theirs:
            break
        same += 1
    return same * BLOCK_SIZE


def sessions_for(seed: int, n: int, spread: float, turns: int | None) -> tuple[Shared, list[Session]]:
    rng = random.Random(seed)
    shared = Shared.make(rng)
    kinds = ("claude", "codex", "chat")
    out = []
    for i in range(n):
        start, count = rng.uniform(0, spread), rng.randint(10, 20)
        session = Session(i, kinds[i % 3], start, turns or count, random.Random(rng.random()))
        session.id = f"{rng.getrandbits(64):016x}-{i}" if session.kind != "chat" else ""
        out.append(session)
    return shared, out
