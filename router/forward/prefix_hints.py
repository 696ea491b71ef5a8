"""What an endpoint's prefix cache is known to hold for a request: the cached part of its
expected time to first token.

Agents resend their whole history every turn, so on a vLLM box with prefix caching
most of a turn's prompt is a cache hit, and an estimate that counts all of it as
prefill would spill nearly every turn of a long session. Two things are known
without reading the whole body, from the usage vLLM reported for earlier requests
on the same endpoint:

* **The conversation**: a turn whose session (router/sessions.py: the client's own
  session id, else its stable prefix) last ran here has that turn's prompt cached, the
  whole of it.
* **The client's fixed prefix** (its tools and the head of its system prompt, the
  same for every session of one agent): a new conversation of a known kind has
  about as much cached as the last new one of its kind reported
  (``cached_tokens``, with ``--enable-prompt-tokens-details``).

A hint lapses once the endpoint has written half its KV cache's worth of tokens
since (prompts and outputs): with the blocks of requests in flight, vLLM's LRU has
evicted it by then. Every request of a client reads its fixed prefix again, so that
hint lasts while the client's sessions run here. Keys are Python hashes of a few short
strings, computed once per request; nothing is serialised. Each replica learns from
the requests it forwarded.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from router.sessions import prompt_parts, tool_names

_ENTRIES = 4096  # conversations remembered per endpoint
# A hint is trusted until the endpoint has written this share of its KV cache since: requests
# in flight hold blocks too, so LRU evicts before a whole cache's worth was written.
_TRUSTED = 0.5


@dataclass(frozen=True, slots=True)
class Keys:
    fixed: int  # the client's fixed prefix
    conversation: int  # this conversation


def keys(api: str, body: dict[str, Any], session: str | None) -> Keys | None:
    """The request's fixed-prefix key and its conversation's (its session, router/sessions.py);
    None for a request with no session (no conversation to hold)."""
    if session is None:
        return None
    head, _ = prompt_parts(api, body)
    return Keys(hash((api, tool_names(body.get("tools")), head)), hash(session))


@dataclass(slots=True)
class PrefixHints:
    """One endpoint's remembered prefixes; ``written`` counts the tokens it has prefilled."""

    kv_tokens: int  # how much the endpoint's cache holds before it evicts
    written: int = 0
    conversations: OrderedDict[int, tuple[int, int]] = field(
        default_factory=OrderedDict
    )  # key → (tokens, at)
    fixed: dict[int, tuple[int, int]] = field(default_factory=dict)

    def cached(self, k: Keys | None) -> int:
        """Prompt tokens this request is expected to find in the endpoint's prefix cache."""
        if k is None:
            return 0
        for seen in (self.conversations.get(k.conversation), self.fixed.get(k.fixed)):
            if (trusted := self._trusted(seen)) is not None:
                return trusted[0]
        return 0

    def warm(self, k: Keys | None) -> bool:
        """Does the endpoint hold this conversation (a turn of it ran here, not evicted since)?"""
        if k is None:
            return True  # nothing to tell by: treated as any other request
        return self._trusted(self.conversations.get(k.conversation)) is not None

    def first_of_its_kind(self, k: Keys | None) -> bool:
        """Has no conversation of this request's client ever run here? Its prefill then warms
        the box for every later session of its client. (A hint that lapsed since does not
        count: the box has run the client before and will again.)"""
        return k is not None and k.fixed not in self.fixed

    def _trusted(self, seen: tuple[int, int] | None) -> tuple[int, int] | None:
        """``seen`` (tokens, written at), unless the endpoint has written enough since to
        have evicted it."""
        if seen is not None and self.written - seen[1] < self.kv_tokens * _TRUSTED:
            return seen
        return None

    def prefilled(self, tokens: int) -> None:
        self.written += max(tokens, 0)

    def remember(self, k: Keys | None, prompt: int, cached: int, completion: int = 0) -> None:
        """A request ran here: its whole prompt is now cached; a new conversation's reported
        hit is what its client's fixed prefix brings."""
        if k is None:
            return
        self.prefilled(prompt - cached + completion)  # generated tokens take cache blocks too
        fixed = self._trusted(self.fixed.get(k.fixed))
        if k.conversation not in self.conversations:
            # A new conversation's hit measures its client's fixed prefix. One that found
            # nothing while nothing was known (the first of its client, or the first since the
            # hint lapsed) bounds it instead: the box holds its whole prompt now, and the next
            # new conversation's hit corrects the bound.
            known = fixed is not None or cached > 0
            self.fixed[k.fixed] = (cached if known else prompt, self.written)
        elif fixed is not None:
            self.fixed[k.fixed] = (fixed[0], self.written)  # every turn of its client reads it again
        self.conversations[k.conversation] = (prompt, self.written)
        self.conversations.move_to_end(k.conversation)
        while len(self.conversations) > _ENTRIES:
            self.conversations.popitem(last=False)
