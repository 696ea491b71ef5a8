"""Two real vLLM boxes behind one local backend (issue 26): with session affinity every
turn of a session runs on the box that holds its history, so vLLM's own counter of
prefix-cache hits grows by that history; without it (least in flight) the turns move
between the boxes and each one re-prefills what only the other box has cached.

The schedule makes the contrast certain, not lucky. Codex-shaped sessions (the whole
history resent every turn, the ``session-id`` header) go in pairs, turn by turn: the
first of a pair starts with both boxes idle and holds its slot while it decodes a fixed
number of tokens (vLLM's ``ignore_eos``); the second starts once the proxy counts the
first in flight. So
least in flight gives the first the first endpoint and the second the other one, and
each pair's order flips every turn: without affinity every turn of a session runs on
the box its previous turn did not. Where each turn ran is read from the boxes
themselves (their prompt-token counters), never from the proxy.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from router.fake.upstream import RunningFake
from tests.harness import ProxyServer, wait_until
from tests.realvllm.conftest import real_config
from tests.realvllm.server import Fleet, VllmServer
from tests.realvllm.wire import PATHS, row_for

SESSIONS = 4  # in pairs
TURNS = 3
# What the first of a pair decodes (ignore_eos): its slot stays taken meanwhile, seconds
# on shared cores, while the second of the pair needs milliseconds to be placed.
HOLD_TOKENS = 64
REPLY_TOKENS = 16  # the second of a pair ends as the model likes (or at this length)
# What each turn adds to the history: a tool's output of a few hundred tokens. Sessions
# differ in its size so that the boxes' prompt-token counters tell who ran where.
OUTPUT = "def reverse(xs): return xs[::-1]  # reversed the list\n"
PROMPT_TOKENS, HITS = "vllm:prompt_tokens_total", "vllm:prefix_cache_hits_total"


@dataclass
class Session:
    """One agent conversation: its id, its history, and what each of its turns did."""

    index: int
    id: str = field(default_factory=lambda: f"codex-{uuid.uuid4()}")
    history: list[dict[str, Any]] = field(default_factory=list)
    boxes: list[int] = field(default_factory=list)  # where each turn ran
    prompts: list[int] = field(default_factory=list)  # each turn's prompt tokens (its row)
    cached: list[int] = field(default_factory=list)  # ... of them prefix-cache hits

    def next_input(self, turn: int) -> list[dict[str, Any]]:
        # The first token is the session's own: nothing it sends shares a cache block
        # with another session or another phase.
        head = f"[{self.id}] " if turn == 0 else ""
        output = OUTPUT * (8 + 2 * self.index)
        self.history.append({"role": "user", "content": f"{head}turn {turn}: the tool said\n{output}"})
        return list(self.history)

    def answered(self, turn: int) -> None:
        self.history.append({"role": "assistant", "content": f"step {turn} done"})


@dataclass
class Phase:
    sessions: list[Session]
    hits: float  # vllm:prefix_cache_hits_total, summed over the boxes, over the phase


def prompt_tokens(boxes: list[VllmServer]) -> list[float]:
    return [box.counters(PROMPT_TOKENS)[0] for box in boxes]


def hits(boxes: list[VllmServer]) -> float:
    return sum(box.counters(HITS)[0] for box in boxes)


def placement(deltas: list[float], prompts: list[int]) -> tuple[int, ...]:
    """Which box ran each request: the one assignment whose per-box prompt tokens are
    the boxes' counter deltas (the prompts differ, so at most one fits)."""
    for boxes in itertools.product(range(len(deltas)), repeat=len(prompts)):
        sums = [sum(p for p, b in zip(prompts, boxes, strict=True) if b == i) for i in range(len(deltas))]
        if sums == deltas:
            return boxes
    raise AssertionError(f"no placement of prompts {prompts} gives the boxes' counts {deltas}")


def send_turn(proxy: ProxyServer, session: Session, turn: int, hold: bool = False) -> httpx.Response:
    """One turn, streamed; with ``hold`` it decodes HOLD_TOKENS, holding its slot meanwhile."""
    body: dict[str, Any] = {"model": "local", "input": session.next_input(turn), "stream": True}
    if hold:
        body.update(max_output_tokens=HOLD_TOKENS, ignore_eos=True)  # vLLM's own parameter
    else:
        body["max_output_tokens"] = REPLY_TOKENS
    headers = {"x-offload-route": "local", "session-id": session.id}
    with httpx.stream("POST", proxy.url + PATHS["responses"], json=body, headers=headers, timeout=300) as r:
        r.read()
    assert r.status_code == 200, r.text[:300]
    session.answered(turn)
    return r


def in_flight(proxy: ProxyServer) -> int:
    endpoints = proxy.get("/readyz").json()["backends"]["local"]["endpoints"]
    return sum(e["in_flight"] for e in endpoints)


def run_pair(proxy: ProxyServer, boxes: list[VllmServer], pair: tuple[Session, Session], turn: int) -> None:
    """Both sessions' turn ``turn``; the second starts once the first holds its slot (the
    proxy counts it in flight), all of the first's prefill and decode before it."""
    assert wait_until(lambda: in_flight(proxy) == 0, timeout=10)
    before = prompt_tokens(boxes)
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(send_turn, proxy, pair[0], turn, True)
        if not wait_until(lambda: in_flight(proxy) == 1, timeout=60, interval=0.005):
            first.result()  # its failure, if it failed
            raise AssertionError("the first of the pair was over before the proxy counted it")
        second = send_turn(proxy, pair[1], turn)
        responses = [first.result(), second]
    rows = [row_for(proxy, r) for r in responses]
    prompts = [row.prompt_tokens for row in rows]
    assert prompts[0] != prompts[1], "the pair's prompts must differ to tell where each ran"

    def deltas() -> list[float]:
        return [a - b for a, b in zip(prompt_tokens(boxes), before, strict=True)]

    assert wait_until(lambda: sum(deltas()) == sum(prompts), timeout=10), (deltas(), prompts)
    for session, row, box in zip(pair, rows, placement(deltas(), prompts), strict=True):
        session.boxes.append(box)
        session.prompts.append(row.prompt_tokens)
        session.cached.append(row.cached_tokens)


def pairs(sessions: list[Session], turn: int) -> Iterator[tuple[Session, Session]]:
    """The sessions two by two, each pair's order flipped on odd turns."""
    for a, b in zip(sessions[::2], sessions[1::2], strict=True):
        yield (a, b) if turn % 2 == 0 else (b, a)


def run_phase(proxy: ProxyServer, boxes: list[VllmServer]) -> Phase:
    sessions = [Session(i) for i in range(SESSIONS)]
    before = hits(boxes)
    for turn in range(TURNS):
        for pair in pairs(sessions, turn):
            run_pair(proxy, boxes, pair, turn)
    return Phase(sessions, hits(boxes) - before)


@pytest.fixture(scope="module")
def boxes(vllm_fleet: Fleet) -> list[VllmServer]:
    return vllm_fleet.servers(2)


def phase_with(boxes: list[VllmServer], cloud: RunningFake, affinity: bool) -> Phase:
    """The schedule through a fresh proxy whose local backend has both boxes as endpoints."""
    local = {"endpoints": [box.url for box in boxes], "affinity": affinity}
    # A box busy decoding on shared cores may answer /health late: a probe's timeout would
    # count it down and move its sessions, which is affinity's rule, not this test's point.
    health = {"probe_timeout_s": 30.0}
    proxy = ProxyServer(real_config(boxes[0].url, cloud.url, local, health=health))
    try:
        return run_phase(proxy, boxes)
    finally:
        proxy.stop()


def reachable_hits(session: Session, block_size: int) -> list[int]:
    """What each turn can hit: the whole blocks of the last prompt its session sent to
    the same box (a box holds nothing else of the session; vLLM caches whole blocks)."""
    last: dict[int, int] = {}
    reachable = []
    for box, prompt in zip(session.boxes, session.prompts, strict=True):
        reachable.append(last.get(box, 0) // block_size * block_size)
        last[box] = prompt
    return reachable


def test_prefix_cache_hits_grow_with_affinity_and_not_without(
    boxes: list[VllmServer], tier_cloud: RunningFake, block_size: int
) -> None:
    on = phase_with(boxes, tier_cloud, affinity=True)
    off = phase_with(boxes, tier_cloud, affinity=False)
    for s in on.sessions:
        assert len(set(s.boxes)) == 1, f"with affinity a session stays on one box: {s.boxes}"
    for s in off.sessions:
        moves = [a != b for a, b in itertools.pairwise(s.boxes)]
        assert all(moves), f"without affinity the schedule moves every turn: {s.boxes}"
    for phase in (on, off):
        for s in phase.sessions:
            reachable = reachable_hits(s, block_size)
            # All of it is hit (one block of slack where the template joins the turns).
            assert all(r - block_size <= c <= r for c, r in zip(s.cached, reachable, strict=True)), (
                s.boxes, s.prompts, s.cached, reachable,
            )  # fmt: skip
        assert phase.hits == sum(sum(s.cached) for s in phase.sessions)  # vLLM counted what it reported
    # With affinity every turn after the first hits its whole history; without it a turn
    # hits only what its session left on that box two turns before, the first move nothing.
    assert off.hits < on.hits / 2, (off.hits, on.hits)
