"""Two real vLLM boxes behind one local backend (issue 26): with session affinity every
turn of a session runs on the box that holds its history, so vLLM's own counter of
prefix-cache hits grows by that history; without it the turns move between the boxes and
each one re-prefills what only the other box has cached.

Two replicas of the proxy share nothing (no ``state:``) and list the two boxes in
opposite orders, as two hand-written configs may; the turns of every session alternate
between them, as behind any load balancer. One turn at a time, so nothing depends on
timing. Without affinity each replica gives an idle turn its first-listed box: every turn
moves. With it both replicas find the same box for a session whatever their list's order
(the rendezvous order is a function of the session and the URLs alone). Codex-shaped
sessions (the whole history resent every turn, the ``session-id`` header); where each
turn ran is read from the boxes themselves (their prompt-token counters), never from the
proxy.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from router.fake.upstream import RunningFake
from tests.harness import ProxyServer, wait_until
from tests.realvllm.conftest import real_config
from tests.realvllm.server import Fleet, VllmServer
from tests.realvllm.wire import PATHS, row_for

SESSIONS = 4
TURNS = 3
REPLY_TOKENS = 16  # a turn's answer ends as the model likes, or at this length
# What each turn adds to the history: a tool's output of a few hundred tokens (more for
# each later session, so that no two histories are alike).
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


def send_turn(proxy: ProxyServer, session: Session, turn: int) -> httpx.Response:
    """One turn, streamed, as Codex sends it."""
    body: dict[str, Any] = {"model": "local", "input": session.next_input(turn), "stream": True}
    body["max_output_tokens"] = REPLY_TOKENS
    headers = {"x-offload-route": "local", "session-id": session.id}
    with httpx.stream("POST", proxy.url + PATHS["responses"], json=body, headers=headers, timeout=300) as r:
        r.read()
    assert r.status_code == 200, r.text[:300]
    session.answered(turn)
    return r


def run_turn(replica: ProxyServer, boxes: list[VllmServer], session: Session, turn: int) -> None:
    """One turn through ``replica``: where it ran (the box whose prompt counter moved by
    its row's prompt tokens) and what it hit."""
    before = prompt_tokens(boxes)
    row = row_for(replica, send_turn(replica, session, turn))

    def deltas() -> list[float]:
        return [a - b for a, b in zip(prompt_tokens(boxes), before, strict=True)]

    assert wait_until(lambda: sum(deltas()) == row.prompt_tokens, timeout=10), (deltas(), row.prompt_tokens)
    (box,) = [i for i, d in enumerate(deltas()) if d]
    session.boxes.append(box)
    session.prompts.append(row.prompt_tokens)
    session.cached.append(row.cached_tokens)


def phase_with(boxes: list[VllmServer], cloud: RunningFake, affinity: bool) -> Phase:
    """Every session's turns, alternating between two fresh replicas whose local backend
    lists the boxes in opposite orders."""
    # A box busy on shared cores may answer /health late: a probe's timeout would count it
    # down and move its sessions, which is affinity's rule, not this test's point.
    health = {"probe_timeout_s": 30.0}
    replicas = [
        ProxyServer(
            real_config(
                boxes[0].url,
                cloud.url,
                {"endpoints": [b.url for b in order], "affinity": affinity},
                health=health,
            )
        )
        for order in (boxes, boxes[::-1])
    ]
    try:
        sessions = [Session(i) for i in range(SESSIONS)]
        before = hits(boxes)
        for turn in range(TURNS):
            for session in sessions:
                run_turn(replicas[turn % 2], boxes, session, turn)
        return Phase(sessions, hits(boxes) - before)
    finally:
        for replica in replicas:
            replica.stop()


@pytest.fixture(scope="module")
def boxes(vllm_fleet: Fleet) -> list[VllmServer]:
    return vllm_fleet.servers(2)


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
        assert all(moves), f"without affinity every turn moves to the other replica's first box: {s.boxes}"
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
    print(f"\nprefix-cache hit tokens over two boxes: with affinity {on.hits:.0f}, without {off.hits:.0f}")
    assert off.hits < on.hits / 2, (off.hits, on.hits)
