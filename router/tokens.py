"""The one estimate of a request's prompt tokens from its body's size.

Used where the proxy must count tokens before any upstream has: the tokens a key's limits
reserve at admission, the local context window the policy checks, and the prompt count of a
request whose upstream never reported usage. One ratio, so the three never disagree.
"""

from __future__ import annotations

TOKENS_PER_BYTE = 0.25  # a prompt's tokens from its request body's size (JSON, code and prose)


def prompt_tokens(body_bytes: int) -> int:
    """The prompt tokens of a request whose body is ``body_bytes`` long."""
    return int(max(body_bytes, 0) * TOKENS_PER_BYTE)
