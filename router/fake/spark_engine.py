"""The simulated Spark's scheduler: vLLM's token arithmetic without a model.

:class:`Engine` is a plain object advanced by :meth:`Engine.step` in *simulated*
seconds, so its arithmetic can be checked without a clock; ``router.fake.spark``
drives it in scaled real time behind the fake upstream's HTTP API.

What it models, after vLLM's V1 scheduler:

* **Admission**: requests wait in FIFO order and run while fewer than
  ``max_num_seqs`` run and the KV cache can hold their next chunk.
* **Chunked prefill at a token rate**: ``prefill_tps`` tokens per simulated
  second, shared first come first served among the running requests that still
  owe prefill (the oldest gets its whole share before the next gets any). The
  step that completes a prefill also produces the first token.
* **Decode at a rate per sequence**: ``decode_tps`` tokens per second each.
* **The KV cache in blocks** of ``block_size`` tokens (16, vLLM's default),
  ``kv_tokens // block_size`` of them. When a running request needs a block and
  none is free, the newest running request is preempted: it frees its blocks
  and waits again at the front of the queue, to recompute (``num_preemptions``).
* **Automatic prefix caching**: a full prompt block is known by a hash chained
  over every block before it, so equal prefixes share blocks. A finished
  request's hashed blocks stay cached, evictable in LRU order. A hit counts
  whole blocks only and never the prompt's last token (vLLM recomputes it),
  so a 35-token prompt sent twice hits 32 tokens, a 16-token one none.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

BLOCK_SIZE = 16
BYTES_PER_TOKEN = 4  # the fake's tokenizer: four bytes of the rendered prompt are one token


@dataclass(frozen=True, slots=True)
class SparkSpec:
    """The box being simulated; the defaults are one DGX Spark serving Laguna S 2.1."""

    prefill_tps: float = 700.0
    decode_tps: float = 20.0
    max_num_seqs: int = 32
    kv_tokens: int = 825_000
    block_size: int = BLOCK_SIZE
    max_num_queued_reqs: int | None = None  # vLLM's --max-num-queued-reqs: past it, a 503

    @property
    def num_blocks(self) -> int:
        return self.kv_tokens // self.block_size


def block_hashes(prompt: bytes, block_size: int = BLOCK_SIZE) -> tuple[int, list[bytes]]:
    """The prompt's token count and the chained hash of each of its full blocks."""
    tokens = max(1, len(prompt) // BYTES_PER_TOKEN)
    step = block_size * BYTES_PER_TOKEN
    hashes: list[bytes] = []
    parent = b""
    for start in range(0, (len(prompt) // step) * step, step):
        parent = hashlib.blake2b(parent + prompt[start : start + step], digest_size=16).digest()
        hashes.append(parent)
    return tokens, hashes


@dataclass(eq=False, slots=True)
class Seq:
    """One request inside the engine. Times are simulated seconds."""

    prompt_tokens: int
    hashes: Sequence[bytes]
    max_tokens: int
    arrived: float
    cached_tokens: int = 0  # from the prefix cache at (first) admission: what usage reports
    computed: float = 0.0  # prompt (+ recomputed output) tokens with KV
    generated: float = 0.0
    first_token_at: float | None = None
    finished_at: float | None = None
    admitted: bool = False
    shared: list[bytes] = field(default_factory=list)  # hashed blocks it references
    own_blocks: int = 0  # blocks it holds that no one else can share
    preempted: int = 0

    @property
    def target(self) -> int:
        """The tokens it must compute before decoding (after a preemption, its output too)."""
        return self.prompt_tokens + (int(self.generated) if self.preempted else 0)

    @property
    def done(self) -> bool:
        return self.finished_at is not None

    @property
    def output_tokens(self) -> int:
        return min(self.max_tokens, int(self.generated))

    @property
    def blocks(self) -> int:
        return len(self.shared) + self.own_blocks


class Engine:
    """The scheduler state of one simulated box; see the module docstring."""

    def __init__(self, spec: SparkSpec) -> None:
        self.spec = spec
        self.now = 0.0
        self.waiting: deque[Seq] = deque()
        self.running: list[Seq] = []
        self.free_blocks = spec.num_blocks
        self.refs: dict[bytes, int] = {}  # hashed blocks in use → how many requests use them
        self.evictable: OrderedDict[bytes, None] = OrderedDict()  # cached, unused, LRU first
        # vLLM's counters
        self.prefix_queries = 0
        self.prefix_hits = 0
        self.preemptions = 0
        self.prompt_tokens_total = 0
        self.generation_tokens_total = 0

    # ------------------------------------------------------------ requests

    @property
    def queue_full(self) -> bool:
        limit = self.spec.max_num_queued_reqs
        return limit is not None and len(self.waiting) >= limit

    def submit(self, prompt_tokens: int, hashes: Sequence[bytes], max_tokens: int) -> Seq:
        seq = Seq(prompt_tokens, hashes, max(1, max_tokens), self.now)
        self.waiting.append(seq)
        self.prompt_tokens_total += prompt_tokens
        return seq

    def abort(self, seq: Seq) -> None:
        """The client went away: free what it holds at once."""
        if seq in self.running:
            self.running.remove(seq)
            self._free(seq)
        elif seq in self.waiting:
            self.waiting.remove(seq)
        if seq.finished_at is None:
            seq.finished_at = self.now

    @property
    def kv_usage(self) -> float:
        """vLLM's kv_cache_usage_perc: the share of blocks in use (cached, unused ones are free)."""
        total = self.spec.num_blocks
        return (total - self.free_blocks - len(self.evictable)) / total if total else 0.0

    # ------------------------------------------------------------ the clock

    def step(self, dt: float) -> None:
        """Advance ``dt`` simulated seconds: admit, prefill FIFO, decode, finish."""
        start = self.now
        self._admit()
        budget = self.spec.prefill_tps * dt
        spent = 0.0
        for seq in list(self.running):
            if seq not in self.running:
                continue  # preempted while an older request grew
            if seq.computed < seq.target:
                take = min(budget - spent, seq.target - seq.computed)
                if take <= 0:
                    continue
                if not self._grow(seq, seq.computed + take):
                    continue
                spent += take
                seq.computed += take
                if seq.computed >= seq.target:
                    ready = start + spent / self.spec.prefill_tps  # its prefill ends here
                    if seq.first_token_at is None:
                        seq.first_token_at = ready
                        seq.generated = 1.0
                        self.generation_tokens_total += 1
                    self._decode(seq, ready, start + dt - ready)
            else:
                self._decode(seq, start, dt)
        self.now = start + dt
        self._admit()  # what freed up this step lets the next start at once

    def _decode(self, seq: Seq, t0: float, dt: float) -> None:
        """Decode ``seq`` from simulated time ``t0`` for ``dt`` seconds, or until it is done."""
        if seq not in self.running or dt <= 0:
            return
        before = int(seq.generated)
        need = (seq.max_tokens - seq.generated) / self.spec.decode_tps
        want = min(float(seq.max_tokens), seq.generated + self.spec.decode_tps * dt)
        if not self._grow(seq, seq.prompt_tokens + want):
            return
        seq.generated = want
        self.generation_tokens_total += int(want) - before
        if int(seq.generated) >= seq.max_tokens:
            seq.finished_at = t0 + min(dt, need)
            self.running.remove(seq)
            self._free(seq)

    # ------------------------------------------------------------ admission

    def _admit(self) -> None:
        while self.waiting and len(self.running) < self.spec.max_num_seqs:
            seq = self.waiting[0]
            hits = self._hits(seq)
            if self.free_blocks + len(self.evictable) - sum(1 for h in hits if h in self.evictable) < 1:
                return  # no room for its first chunk: it waits
            self.waiting.popleft()
            for h in hits:
                self._ref(h)
            seq.shared = list(hits)
            cached = len(hits) * self.spec.block_size
            if not seq.admitted:
                seq.cached_tokens = cached
                self.prefix_queries += seq.prompt_tokens
                self.prefix_hits += cached
            seq.computed = float(cached)
            seq.admitted = True
            self.running.append(seq)

    def _hits(self, seq: Seq) -> list[bytes]:
        """The cached blocks of its prefix: whole blocks, never the prompt's last token."""
        usable = (seq.prompt_tokens - 1) // self.spec.block_size
        hits: list[bytes] = []
        for h in seq.hashes[:usable]:
            if h not in self.refs and h not in self.evictable:
                break
            hits.append(h)
        return hits

    # ------------------------------------------------------------ blocks

    def _grow(self, seq: Seq, tokens: float) -> bool:
        """Give ``seq`` the blocks for ``tokens`` tokens, preempting the newest running request
        when none is free; then hash the prompt blocks that are now full. False when ``seq``
        itself was preempted."""
        needed = -(-int(tokens) // self.spec.block_size)
        while seq.blocks < needed:
            if self._take_block():
                seq.own_blocks += 1
                continue
            victim = self.running[-1]
            self._preempt(victim)
            if victim is seq:
                return False
        self._register(seq, tokens)
        return True

    def _register(self, seq: Seq, tokens: float) -> None:
        """Full prompt blocks join the prefix cache; one another request computed meanwhile
        is shared instead (and this request's copy freed)."""
        size = self.spec.block_size
        full = min(len(seq.hashes), int(tokens) // size, seq.prompt_tokens // size)
        while len(seq.shared) < full and seq.own_blocks:
            h = seq.hashes[len(seq.shared)]
            seq.own_blocks -= 1
            if h in self.refs or h in self.evictable:
                self._ref(h)
                self.free_blocks += 1
            else:
                self.refs[h] = 1
            seq.shared.append(h)

    def _take_block(self) -> bool:
        if self.free_blocks:
            self.free_blocks -= 1
            return True
        if self.evictable:
            self.evictable.popitem(last=False)  # the least recently used cached block
            return True
        return False

    def _ref(self, h: bytes) -> None:
        if h in self.evictable:
            del self.evictable[h]
            self.refs[h] = 1
        else:
            self.refs[h] += 1

    def _free(self, seq: Seq) -> None:
        for h in seq.shared:
            self.refs[h] -= 1
            if self.refs[h] == 0:
                del self.refs[h]
                self.evictable[h] = None  # most recently used end
        self.free_blocks += seq.own_blocks
        seq.shared, seq.own_blocks = [], 0

    def _preempt(self, seq: Seq) -> None:
        self.running.remove(seq)
        self._free(seq)
        seq.computed = 0.0
        seq.preempted += 1
        self.preemptions += 1
        self.waiting.appendleft(seq)
