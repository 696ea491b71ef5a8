"""What an endpoint's prefix cache is known to hold: a conversation's last prompt there, a
client's fixed prefix from a new conversation's reported hit, and both lapsing with eviction."""

from __future__ import annotations

from typing import Any

from router.forward.prefix_hints import Keys, PrefixHints
from router.forward.prefix_hints import keys as keys_of
from router.sessions import session_of

TOOLS = [{"name": "bash", "description": "run", "input_schema": {"type": "object"}}]


def keys(api: str, body: dict[str, Any]) -> Keys | None:
    """A request's keys, its session as the proxy finds it (no session header here)."""
    return keys_of(api, body, session_of(api, body, None))


def claude(task: str, *more: str) -> dict[str, Any]:
    turns: list[dict[str, Any]] = [{"role": "user", "content": task}]
    for i, text in enumerate(more):
        turns.append({"role": "assistant" if i % 2 == 0 else "user", "content": text})
    return {"system": [{"type": "text", "text": "You are Claude Code."}], "tools": TOOLS, "messages": turns}


def test_turns_of_one_conversation_share_its_key_in_every_api() -> None:
    one, two = keys("messages", claude("fix the bug")), keys("messages", claude("fix the bug", "ok", "done"))
    other = keys("messages", claude("write docs"))
    assert one == two and one is not None and other is not None
    assert other.conversation != one.conversation and other.fixed == one.fixed
    chat = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]}
    grown = {"messages": [*chat["messages"], {"role": "assistant", "content": "yo"}]}
    assert keys("chat", chat) == keys("chat", grown)
    codex = {"instructions": "codex", "input": [{"type": "message", "role": "user", "content": "task"}]}
    assert keys("responses", codex) == keys("responses", {**codex, "input": [*codex["input"], {"x": 1}]})
    assert keys("embeddings", {"input": "x"}) is None  # no conversation to hold


def test_a_conversation_that_ran_here_has_its_last_prompt_cached() -> None:
    hints = PrefixHints(kv_tokens=100_000)
    k = keys("messages", claude("fix the bug"))
    assert hints.cached(k) == 0 and not hints.warm(k)
    hints.remember(k, prompt=20_000, cached=0)
    assert hints.cached(k) == 20_000 and hints.warm(k)


def test_a_new_conversation_of_a_known_client_has_its_fixed_prefix_cached() -> None:
    hints = PrefixHints(kv_tokens=100_000)
    hints.remember(keys("messages", claude("fix the bug")), prompt=20_000, cached=15_000)
    fresh = keys("messages", claude("write docs"))
    assert hints.cached(fresh) == 15_000 and not hints.warm(fresh)


def test_hints_lapse_once_the_endpoint_prefilled_more_than_its_cache_holds() -> None:
    hints = PrefixHints(kv_tokens=50_000)
    k = keys("messages", claude("fix the bug"))
    hints.remember(k, prompt=20_000, cached=0)
    hints.prefilled(60_000)  # other work since: LRU evicted it
    assert hints.cached(k) == 0 and not hints.warm(k)


def test_the_first_conversation_of_a_client_bounds_its_fixed_prefix_until_the_next_measures_it() -> None:
    hints = PrefixHints(kv_tokens=1_000_000)
    hints.remember(keys("messages", claude("fix the bug")), prompt=20_000, cached=0)  # a cold box
    second = keys("messages", claude("write docs"))
    assert hints.cached(second) == 20_000  # the box holds the first one's prompt, fixed part and all
    hints.remember(second, prompt=21_000, cached=16_000)  # what it really found
    assert hints.cached(keys("messages", claude("add a test"))) == 16_000


def test_a_clients_fixed_prefix_stays_trusted_while_its_sessions_keep_reading_it() -> None:
    hints = PrefixHints(kv_tokens=100_000)
    busy = keys("messages", claude("fix the bug"))
    hints.remember(busy, prompt=20_000, cached=0)
    hints.remember(keys("messages", claude("write docs")), prompt=21_000, cached=16_000)
    for turn in range(10):  # one session's turns write 100K tokens, twice what the hint trusts
        hints.remember(busy, prompt=30_000 + turn * 10_000, cached=20_000 + turn * 10_000)
    assert hints.cached(keys("messages", claude("add a test"))) == 16_000


def test_claude_codes_billing_header_does_not_make_every_request_a_new_kind() -> None:
    """Its cch= is new on every request: the fixed-prefix key is read without it."""
    one, two = claude("fix the bug"), claude("write docs")
    for body, cch in ((one, "a1b2c"), (two, "f9e8d")):
        body["system"] = [
            {"type": "text", "text": f"x-anthropic-billing-header: cc_version=2.1; cch={cch};"},
            *body["system"],
        ]
    k1, k2 = keys("messages", one), keys("messages", two)
    assert k1 is not None and k2 is not None and k1.fixed == k2.fixed
    hints = PrefixHints(kv_tokens=100_000)
    hints.remember(k1, prompt=20_000, cached=0)
    assert not hints.first_of_its_kind(k2)  # the box has run this client
