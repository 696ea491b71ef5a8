"""Redaction of credentials in URLs: the one place that decides what a URL may show.

A backend or database URL may carry credentials (``http://user:pass@host/v1``,
``https://host/v1?api_key=...``). Anything that leaves the process, whether
``/readyz``, ``/offload/state`` or a log line, shows such a URL only through
:func:`redact_url` (or :func:`redact_urls` for free text that may contain some).
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"

# scheme://user:PASSWORD@ keeps the user name; scheme://TOKEN@ (no colon) is a
# credential on its own (https://TOKEN@host) and goes whole.
_USERINFO = re.compile(r"(?<=://)(?:([^/?#@:\s]*):)?[^/?#\s]*@")
# ?api_key=... &token=... : a query parameter whose name says it is a secret.
_SECRET_PARAM = re.compile(
    r"(?i)([?&;][^=&;#\s]*(?:key|secret|password|passwd|token|sig|signature|auth)[^=&;#\s]*=)[^&;#\s]*"
)


def _userinfo(match: re.Match[str]) -> str:
    user = match.group(1)
    return f"{user}:{REDACTED}@" if user is not None else f"{REDACTED}@"


def redact_url(url: str) -> str:
    """``url`` with any userinfo and any secret-named query parameter replaced by ``<redacted>``.

    >>> redact_url("http://user:pass@spark:8000/v1?api_key=k&x=1")
    'http://user:<redacted>@spark:8000/v1?api_key=<redacted>&x=1'
    """
    return redact_urls(url)


def redact_urls(text: str) -> str:
    """Every URL credential in ``text`` redacted (a config value, a log message)."""
    if "@" in text:
        text = _USERINFO.sub(_userinfo, text)
    if "=" in text:
        text = _SECRET_PARAM.sub(r"\1" + REDACTED, text)
    return text


_SECRET_NAMES = ("key", "secret", "password", "token")


def redact_secrets(value: Any, name: str = "") -> Any:
    """A JSON value (the config, dumped) with every secret replaced by ``"<redacted>"``.

    Redacts by name (any string field whose name mentions key, secret, password or
    token, except the ``*_env`` fields that only name a variable) and any credential in
    a URL, so that secrets added later stay hidden too.
    """
    if isinstance(value, dict):
        return {k: redact_secrets(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_secrets(v, name) for v in value]
    if isinstance(value, str):
        lowered = name.lower()
        if value and not lowered.endswith("_env") and any(s in lowered for s in _SECRET_NAMES):
            return REDACTED
        return redact_urls(value)
    return value


__all__ = ["REDACTED", "redact_secrets", "redact_url", "redact_urls"]
