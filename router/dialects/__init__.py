"""One dialect per API the proxy speaks (see ``router/dialects/base.py``).

``BY_PATH`` maps each forwarding endpoint to its dialect; ``router/app.py``
wires the endpoints from it and ``router/forward/proxy.py`` forwards through it.
"""

from __future__ import annotations

from router.dialects.base import Adapted, Dialect, StreamRelay, Usage, Whole
from router.dialects.chat import Chat, Completions, Embeddings
from router.dialects.messages import CountTokens, Messages
from router.dialects.responses import Responses

CHAT = Chat()
COMPLETIONS = Completions()
EMBEDDINGS = Embeddings()
RESPONSES = Responses()
MESSAGES = Messages()
COUNT_TOKENS = CountTokens()

BY_PATH: dict[str, Dialect] = {
    "/v1/chat/completions": CHAT,
    "/v1/completions": COMPLETIONS,
    "/v1/embeddings": EMBEDDINGS,
    "/v1/responses": RESPONSES,
    "/v1/messages": MESSAGES,
    "/v1/messages/count_tokens": COUNT_TOKENS,
}
APIS = ("chat", "completions", "embeddings", "responses", "messages")
# The APIs whose bodies /offload/route and `offload classify --api` decide (chat: a body
# without messages is a completions request).
ROUTE_APIS: dict[str, Dialect] = {"chat": CHAT, "responses": RESPONSES, "messages": MESSAGES}

__all__ = [
    "APIS",
    "BY_PATH",
    "CHAT",
    "COMPLETIONS",
    "COUNT_TOKENS",
    "EMBEDDINGS",
    "MESSAGES",
    "RESPONSES",
    "ROUTE_APIS",
    "Adapted",
    "Dialect",
    "StreamRelay",
    "Usage",
    "Whole",
]
