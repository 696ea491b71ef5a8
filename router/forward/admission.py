"""Admission by expected time to first token: the box's currency is tokens, not requests.

A vLLM box is bound by prefill (hundreds of tokens a second), decode (tens a
second per sequence) and its KV cache, not by its request slots: ten agents
that start at once with 25K-token prompts leave ten of 32 slots busy and
``num_requests_waiting`` at zero while the last of them waits minutes for its
first token. :class:`EndpointLoad` is the router's own view of one endpoint in
tokens, a small state machine with no I/O:

* **Prefill owed**: the uncached prompt tokens of every admitted request still
  waiting for its first token, first come first served (vLLM's chunked prefill
  serves the oldest first). The head's share already done is its elapsed
  time times the rate.
* **KV held**: prompt plus expected output of every request in flight.
* **Rates learned online** (:class:`Rate`): prefill from each stream's first
  token (its uncached tokens over the time its prefill had the box: from its
  arrival, or the previous first token if that came later), decode from
  completion tokens over the time after the first token. They start from
  the backend's ``prefill_tps`` / ``decode_tps``.
* **Bytes per token** learned from the prompt tokens vLLM reports against the
  bytes sent: the estimate of the next prompt (:meth:`EndpointLoad.estimate`).

:meth:`EndpointLoad.decide` gives an immutable :class:`Admit`: ``admit``,
``spill`` (reason ``ttft`` or ``kv``) or ``wait`` (when the request has nowhere
else to go and the wait queue, bounded in tokens, has room). An admitted
request gets a :class:`Ticket` whose first-byte deadline comes from its expected
TTFT: a slow but progressing prefill is never cut, a hung upstream still is.

What a request is known to have cached there (session affinity) lowers its
uncached tokens: :meth:`EndpointLoad.decide` takes ``cached`` for that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import count

ADMIT, SPILL, WAIT = "admit", "spill", "wait"
TTFT, KV = "ttft", "kv"  # the machine-readable reasons of a spill

# Bytes of request body per prompt token before any usage was seen: agent bodies (JSON with
# code, tool schemas and escapes) come to about 3.2 bytes a token on the tokenizers of today's
# open models; learned per endpoint from then on.
BYTES_PER_TOKEN = 3.2
COLD_SHARE = 0.5  # of max_ttft_s, for a conversation the endpoint holds nothing of (bench/fleet.py)
DEADLINE_MARGIN = 2.0  # the first-byte deadline: expected TTFT times this, plus first_byte_s
_HALF_LIFE = 40.0  # requests: how fast old rate samples fade


def estimate_prompt_tokens(size: int, bytes_per_token: float = BYTES_PER_TOKEN) -> int:
    """A prompt's tokens from the bytes of the request body sent to the model."""
    return max(1, math.ceil(max(size, 0) / bytes_per_token))


@dataclass(slots=True)
class Rate:
    """A rate learned as a decaying ratio of sums (amount over seconds), starting from a prior
    worth ``prior_weight`` samples' seconds: one small or noisy request cannot swing it."""

    amount: float
    seconds: float
    decay: float = 0.5 ** (1 / _HALF_LIFE)

    @classmethod
    def starting_at(cls, per_second: float, prior_seconds: float = 5.0) -> Rate:
        return cls(per_second * prior_seconds, prior_seconds)

    @property
    def value(self) -> float:
        return self.amount / self.seconds

    def learn(self, amount: float, seconds: float) -> None:
        if amount <= 0 or seconds <= 0:
            return
        self.amount = self.amount * self.decay + amount
        self.seconds = self.seconds * self.decay + seconds


@dataclass(frozen=True, slots=True)
class Admit:
    """What admission says about one request on one endpoint."""

    verdict: str  # ADMIT, SPILL or WAIT
    reason: str | None  # TTFT or KV when not admitted
    expected_ttft_s: float
    prompt_tokens: int  # estimated
    uncached_tokens: int  # estimated: what it adds to the prefill owed


@dataclass(eq=False, slots=True)
class Ticket:
    """One admitted request's tokens on an endpoint, until it ends."""

    id: int
    prompt_tokens: int
    uncached_tokens: int
    kv_tokens: int
    expected_ttft_s: float
    deadline_s: float  # seconds after ``arrived``: no first byte by then → a hung upstream
    arrived: float
    first_byte_at: float | None = None
    prefill_from: float = 0.0  # when its prefill had the box to itself (set at first byte)


@dataclass(slots=True)
class EndpointLoad:
    """The router's own account, in tokens, of one vLLM endpoint; see the module docstring."""

    max_ttft_s: float
    prefill: Rate
    decode: Rate
    kv_capacity: int | None = None  # tokens: vllm:cache_config_info, else the backend's kv_tokens
    queue_tokens: int = 0  # the most uncached tokens that may wait here
    first_byte_s: float = 60.0  # the deadline's floor: what a hung upstream gets beyond its estimate
    bytes_per_token: Rate = field(default_factory=lambda: Rate.starting_at(BYTES_PER_TOKEN, 20_000.0))
    output_tokens: Rate = field(default_factory=lambda: Rate.starting_at(400.0, 1.0))  # mean per request
    owed: dict[int, Ticket] = field(default_factory=dict)  # waiting for their first byte, oldest first
    held: dict[int, Ticket] = field(default_factory=dict)  # every admitted request in flight
    waiting_tokens: int = 0
    last_first_byte: float = 0.0
    _ids: count[int] = field(default_factory=count)

    # ------------------------------------------------------------ the view

    def estimate(self, size: int) -> int:
        return estimate_prompt_tokens(size, self.bytes_per_token.value)

    def prefill_owed(self, now: float) -> float:
        """Uncached tokens still to prefill for the requests admitted here."""
        total = float(sum(t.uncached_tokens for t in self.owed.values()))
        head = next(iter(self.owed.values()), None)
        if head is not None:
            started = max(head.arrived, self.last_first_byte)
            done = (now - started) * self.prefill.value
            total -= min(max(done, 0.0), head.uncached_tokens * 0.95)  # never below a sliver
        return max(total, 0.0)

    @property
    def kv_held(self) -> int:
        return sum(t.kv_tokens for t in self.held.values())

    def expected_ttft(self, uncached: int, now: float) -> float:
        return (self.prefill_owed(now) + uncached) / self.prefill.value

    # ------------------------------------------------------------ deciding

    def decide(
        self,
        size: int,
        now: float,
        *,
        may_spill: bool,
        cached: int = 0,
        warm: bool = True,
        first: bool = False,
    ) -> Admit:
        """Admit, spill or wait a request of ``size`` body bytes, ``cached`` of whose prompt
        tokens are known to be in this endpoint's prefix cache. A request of a conversation
        the endpoint does not hold (``warm`` false) that may go elsewhere gets only
        ``COLD_SHARE`` of ``max_ttft_s`` while others' prefill is owed: the box's prefill time
        goes first to the sessions whose history it already holds, which would pay their whole
        history again elsewhere. The ``first`` of its client's fixed prefix here is admitted on
        an idle box even past ``max_ttft_s``: spilling it would leave the box cold for that
        client for good (nothing else would ever teach it the prefix), and admitting it
        makes every later session of the client a warm one."""
        prompt = self.estimate(size)
        uncached = max(1, prompt - cached)
        expected = self.expected_ttft(uncached, now)
        # With nothing owed ahead there is no warm session to give the box to first.
        cold = not warm and may_spill and bool(self.owed)
        limit = self.max_ttft_s * COLD_SHARE if cold else self.max_ttft_s
        reason = None
        warms_the_box = first and not self.owed
        if expected > limit and (self.owed or (may_spill and not warms_the_box)):
            # Past the limit on its own it is still the fallback's: here it would keep every
            # request after it waiting (FIFO prefill). Only one that must wait is admitted with
            # nothing ahead: waiting cannot make it sooner.
            reason = TTFT
        kv = prompt + int(self.output_tokens.value)
        if self.kv_capacity is not None and self.held and self.kv_held + kv > self.kv_capacity:
            reason = reason or KV
        if reason is None:
            return Admit(ADMIT, None, expected, prompt, uncached)
        if may_spill or self.waiting_tokens + uncached > self.queue_tokens:
            return Admit(SPILL, reason, expected, prompt, uncached)
        return Admit(WAIT, reason, expected, prompt, uncached)

    def admit(self, admit: Admit, now: float) -> Ticket:
        """Count an admitted request's tokens until :meth:`finished` or :meth:`abandoned`."""
        expected = self.expected_ttft(admit.uncached_tokens, now)
        # The deadline takes no credit for the prefix cache: a prefix it has evicted since is
        # a long prefill, not a hung upstream.
        worst = self.expected_ttft(admit.prompt_tokens, now)
        ticket = Ticket(
            next(self._ids),
            admit.prompt_tokens,
            admit.uncached_tokens,
            admit.prompt_tokens + int(self.output_tokens.value),
            expected,
            worst * DEADLINE_MARGIN + self.first_byte_s,
            now,
        )
        self.owed[ticket.id] = ticket
        self.held[ticket.id] = ticket
        return ticket

    # ------------------------------------------------------------ learning

    def first_byte(self, ticket: Ticket, now: float) -> None:
        """Its first token arrived: its prefill is done, and so is every one before it."""
        if ticket.first_byte_at is not None or ticket.id not in self.held:
            return
        ticket.first_byte_at = now
        ticket.prefill_from = max(ticket.arrived, self.last_first_byte)
        self._prefilled_through(ticket, now)

    def _prefilled_through(self, ticket: Ticket, at: float) -> None:
        """``ticket``'s prefill ended at ``at``: so did that of everything admitted before it."""
        for tid in list(self.owed):
            del self.owed[tid]
            if tid == ticket.id:
                break
        self.last_first_byte = max(self.last_first_byte, at)

    def finished(
        self, ticket: Ticket, now: float, size: int, prompt: int, cached: int, completion: int
    ) -> None:
        """It ended with vLLM's usage: learn bytes per token, prefill and decode rates.

        A whole answer (no first byte) still settles the prefill owed before it, ending about
        its decode time ago, but teaches no rate: when its prefill ended is not measured, and
        a guess from the decode rate would teach the prefill rate the decode rate's error."""
        if ticket.first_byte_at is None and ticket.id in self.owed:
            self._prefilled_through(ticket, now - max(completion - 1, 0) / self.decode.value)
        self._forget(ticket)
        if prompt > 0 and size > 0:
            self.bytes_per_token.learn(size, prompt)
        if completion > 0:
            self.output_tokens.learn(completion, 1.0)
        first = ticket.first_byte_at
        if first is None or prompt <= 0:
            return
        self.prefill.learn(max(prompt - cached, 1), first - ticket.prefill_from)
        if completion > 1:
            self.decode.learn(completion - 1, now - first)

    def abandoned(self, ticket: Ticket) -> None:
        """It ended without usage (failed, cancelled, moved on): forget its tokens."""
        self._forget(ticket)

    def _forget(self, ticket: Ticket) -> None:
        self.owed.pop(ticket.id, None)
        self.held.pop(ticket.id, None)

    def state(self, now: float) -> dict[str, object]:
        """For /readyz, /metrics and the console: rates, tokens in flight, KV headroom."""
        headroom = None if self.kv_capacity is None else self.kv_capacity - self.kv_held
        return {
            "max_ttft_s": self.max_ttft_s,
            "prefill_tps": round(self.prefill.value, 1),
            "decode_tps": round(self.decode.value, 2),
            "bytes_per_token": round(self.bytes_per_token.value, 3),
            "prefill_owed_tokens": int(self.prefill_owed(now)),
            "kv_held_tokens": self.kv_held,
            "kv_capacity_tokens": self.kv_capacity,
            "kv_headroom_tokens": headroom,
            "expected_ttft_s": round(self.expected_ttft(0, now), 3),
            "waiting_tokens": self.waiting_tokens,
        }
