"""Client keys: Bearer tokens checked against hashes, never stored in clear.

Keys are hashed once at start-up; a request's token is hashed and looked up,
then confirmed with a constant-time compare, so neither the stored form nor
the timing gives a key away.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from dataclasses import dataclass

from router.config import AuthConfig, ClientKey
from router.errors import ProxyError

log = logging.getLogger("offload.auth")


@dataclass(frozen=True, slots=True)
class Caller:
    name: str
    routes: frozenset[str] | None  # None: any route
    admin: bool = False  # (per-key limits live in router.edge.limits.RateLimits)


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


class KeyStore:
    def __init__(self, auth: AuthConfig) -> None:
        self._all = [
            *self._index(auth.keys, admin=False).items(),
            *self._index(auth.admin_keys, admin=True).items(),
        ]

    @staticmethod
    def _index(entries: list[ClientKey], admin: bool) -> dict[bytes, Caller]:
        out: dict[bytes, Caller] = {}
        for entry in entries:
            if not entry.key:
                log.warning("client key %r is disabled: set %s", entry.name, entry.key_env or "its key")
                continue
            routes = frozenset(entry.routes) if entry.routes else None
            out[_digest(entry.key)] = Caller(entry.name, routes, admin)
        return out

    @property
    def open(self) -> bool:
        """No usable client key: anyone who can reach the port may call."""
        return not self._all

    def caller(self, headers: object) -> Caller | None:
        """The caller behind a request's key, sent as ``Authorization: Bearer <key>`` (OpenAI
        clients, Anthropic SDK 2.x, ``ANTHROPIC_AUTH_TOKEN``) or as ``x-api-key: <key>``
        (Anthropic clients, ``ANTHROPIC_API_KEY``); raises 401 if wrong."""
        values = headers.getlist("authorization")  # type: ignore[attr-defined]
        api_keys = headers.getlist("x-api-key")  # type: ignore[attr-defined]
        if len(values) > 1 or len(api_keys) > 1:
            raise ProxyError(
                400, "send exactly one Authorization or x-api-key header", code="invalid_authorization"
            )
        if self.open:
            return None
        if values:
            scheme, _, token = values[0].partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise _unauthorized("the Authorization header must be 'Bearer <key>'")
        elif api_keys:
            token = api_keys[0]
        else:
            raise _unauthorized("missing key: send 'Authorization: Bearer <key>' or 'x-api-key: <key>'")
        digest = _digest(token.strip())
        found = None
        # Compare against every key, without stopping early, in constant time each.
        for known, caller in self._all:
            if hmac.compare_digest(known, digest):
                found = caller
        if found is None:
            raise _unauthorized("invalid API key")
        return found

    def require_admin(self, headers: object) -> Caller | None:
        caller = self.caller(headers)
        if caller is not None and not caller.admin:
            raise ProxyError(403, "this endpoint needs an admin key", code="admin_required")
        return caller


def _unauthorized(message: str) -> ProxyError:
    return ProxyError(401, message, code="invalid_api_key")
