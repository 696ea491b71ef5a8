"""The headers a forwarded answer carries: the upstream's back-off headers, and the proxy's own
(which backend served, the intent, whether it fell back, the request id, thinking)."""

from __future__ import annotations

import aiohttp

from router.forward.call import Call, Served

# Upstream headers a client needs to back off as the upstream asks (SDKs honour them).
_RELAYED_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry")
_RELAYED_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-")


def relayed_headers(response: aiohttp.ClientResponse) -> dict[str, str]:
    """The upstream's back-off headers (Retry-After, rate-limit state), for the client's SDK."""
    return {
        name: value
        for name, value in response.headers.items()
        if (lower := name.lower()) in _RELAYED_HEADERS or lower.startswith(_RELAYED_PREFIXES)
    }


def route_headers(call: Call, served: Served | None) -> dict[str, str]:
    headers = {
        "x-offload-route": served.backend if served else "none",
        "x-offload-intent": call.decision.intent or "none",
        "x-offload-fallback": "1" if served and served.fallback else "0",
        "x-request-id": call.facts.request_id,
    }
    if served and served.thinking_note:
        headers["x-offload-thinking"] = served.thinking_note
    return headers
