"""``${VAR}`` and ``${VAR:-default}`` from the environment, and what an unset secret becomes.

A secret whose variable is unset does not stop the proxy: it becomes a :class:`MissingEnv`
marker, and the backend (or client key) that needs it is marked unconfigured and names the
variable. Any other unset variable is an error naming the key.
"""

from __future__ import annotations

import os
import re
from typing import Any

from router.config.sections import ConfigError

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")


class MissingEnv(str):
    """Placeholder left where a ``${VAR}`` had no value and no default."""

    var: str

    def __new__(cls, var: str) -> MissingEnv:
        obj = super().__new__(cls, "")
        obj.var = var
        return obj


def substitute_env(value: Any, env: dict[str, str] | os._Environ[str] = os.environ) -> Any:
    """Replace ``${VAR}`` / ``${VAR:-default}`` in every string of a YAML tree."""
    if isinstance(value, dict):
        return {k: substitute_env(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute_env(v, env) for v in value]
    if not isinstance(value, str) or "${" not in value:
        return value
    whole = _ENV_REF.fullmatch(value)
    if whole:
        var, default = whole.group(1), whole.group(2)
        got = env.get(var)
        if got:
            return got
        return default if default is not None else MissingEnv(var)

    missing: list[str] = []

    def repl(m: re.Match[str]) -> str:
        got = env.get(m.group(1))
        if got:
            return got
        if m.group(2) is not None:
            return m.group(2)
        missing.append(m.group(1))
        return ""

    out = _ENV_REF.sub(repl, value)
    return MissingEnv(missing[0]) if missing else out


def env_references(text: str) -> dict[str, str | None]:
    """The ``${VAR}`` / ``${VAR:-default}`` a config text reads, in order: ``{VAR: default or None}``."""
    found: dict[str, str | None] = {}
    for m in _ENV_REF.finditer(text):
        found.setdefault(m.group(1), m.group(2))
    return found


def _secrets_to_markers(raw: dict[str, Any]) -> None:
    """Turn unset secrets into ``*_env`` fields; any other unset variable is an error."""
    for _name, backend in (raw.get("backends") or {}).items():
        if isinstance(backend, dict) and isinstance(backend.get("api_key"), MissingEnv):
            backend["api_key_env"] = backend.pop("api_key").var
    auth = raw.get("auth") or {}
    if isinstance(auth, dict):
        for section in ("keys", "admin_keys"):
            for entry in auth.get(section) or []:
                if isinstance(entry, dict) and isinstance(entry.get("key"), MissingEnv):
                    entry["key_env"] = entry.pop("key").var
    _reject_missing(raw, "")


def _reject_missing(value: Any, path: str) -> None:
    if isinstance(value, MissingEnv):
        raise ConfigError(f"{path}: environment variable {value.var} is not set")
    if isinstance(value, dict):
        for k, v in value.items():
            _reject_missing(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _reject_missing(v, f"{path}[{i}]")
