"""Upstream keys and client keys kept apart.

The proxy's own keys to OpenAI or Anthropic (``backends.NAME.api_key``) and the keys agents
send it (``auth.keys``, ``auth.admin_keys``) live in different hands. When one value is both,
usually because the agents' and the proxy's shells share ``OPENAI_API_KEY`` or
``ANTHROPIC_API_KEY``, the proxy would send the client's key upstream (the agent then sees
"Incorrect API key provided") or accept the provider's key as a client. So the config is
refused at start-up, naming both variables.
"""

from __future__ import annotations

from typing import Any

from router.config.env import _ENV_REF
from router.config.model import Config
from router.config.sections import ConfigError


def secret_sources(raw: dict[str, Any]) -> dict[str, str]:
    """Where each secret of a raw (unsubstituted) config comes from: ``{config key: "$VAR" or
    the config key itself when written inline}``, for the error message."""
    sources: dict[str, str] = {}
    for name, backend in (raw.get("backends") or {}).items():
        if isinstance(backend, dict) and "api_key" in backend:
            sources[f"backends.{name}.api_key"] = _source(backend["api_key"])
    auth = raw.get("auth") or {}
    for section in ("keys", "admin_keys") if isinstance(auth, dict) else ():
        for i, entry in enumerate(auth.get(section) or []):
            if isinstance(entry, dict) and "key" in entry:
                sources[f"auth.{section}[{i}].key"] = _source(entry["key"])
    return sources


def _source(value: Any) -> str:
    found = _ENV_REF.fullmatch(value.strip()) if isinstance(value, str) else None
    return found.group(1) if found else ""


def check_keys_apart(config: Config, sources: dict[str, str]) -> None:
    """Refuse a config in which an upstream key equals a client or admin key."""
    clients = {
        f"auth.{section}[{i}].key": entry.key
        for section in ("keys", "admin_keys")
        for i, entry in enumerate(getattr(config.auth, section))
        if entry.key
    }
    for name, backend in config.backends.items():
        if not backend.api_key or backend.variant_of is not None:
            continue
        upstream = f"backends.{name}.api_key"
        for client, key in clients.items():
            if key == backend.api_key:
                raise ConfigError(
                    f"{_named(upstream, sources)} equals {_named(client, sources)}: the proxy's own key "
                    f"to {name!r} must not be a key agents send; give the agents a key of their own "
                    f"and keep {sources.get(upstream) or upstream} out of their environment"
                )


def _named(key: str, sources: dict[str, str]) -> str:
    var = sources.get(key)
    return f"{key} ({var})" if var else key
