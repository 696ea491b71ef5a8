"""HTML out: the templates, their filters, the headers every page carries, and the one
place where a :class:`ConsoleError` becomes a response.

Jinja2 escapes every value (autoescape): stored prompt text, model names, client
names, reasons. The Content-Security-Policy allows no script at all and styles
from the console's own stylesheet only, so even a value that slipped through
could not run.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import jinja2
from markupsafe import Markup, escape
from starlette.responses import HTMLResponse, RedirectResponse, Response

from router.console.session import PATH, ConsoleError
from router.decide.reasons import Reason

HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",  # pages may hold prompt text
}


def _money(value: float | None) -> str:
    return "–" if value is None else f"{value:,.2f}"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def _conf(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _time(value: datetime | None) -> str:
    return "–" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


def _meaning(reason: str | None) -> str:
    """What a reason string means, as plain text (a ``title``); empty for an unknown one."""
    kind = Reason.of(reason)
    return kind.meaning.replace("`", "") if kind is not None else ""


def _explain(reason: str | None) -> Markup:
    """What a reason (a kind, or a reason string) means, as HTML: its `code` spans in <code>."""
    kind = reason if isinstance(reason, Reason) else Reason.of(reason)
    parts = str(escape(kind.meaning if kind is not None else "")).split("`")
    return Markup("".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts)))


def _query(params: dict[str, str], **more: str) -> str:
    """``?a=1&b=2`` for a link, with ``more`` added (empty values dropped)."""
    merged = {k: v for k, v in {**params, **more}.items() if v}
    return "?" + urlencode(merged) if merged else ""


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("router.console", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters.update(
    money=_money, num=_num, pct=_pct, conf=_conf, time=_time, meaning=_meaning, explain=_explain
)
_ENV.globals.update(base=PATH, query=_query)


def page(template: str, context: dict[str, Any]) -> str:
    """A page's HTML (run it in a console thread: rendering a long page takes milliseconds)."""
    return _ENV.get_template(template).render(**context)


def html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=HEADERS)


def redirect(location: str) -> Response:
    return RedirectResponse(location, status_code=303, headers=HEADERS)


def error_response(exc: ConsoleError) -> Response:
    """The response for every console error: a redirect when it names one, else a page."""
    if exc.location is not None:
        return redirect(exc.location)
    response = html(page("error.html", {"status": exc.status, "message": exc.message}), exc.status)
    return with_retry_after(response, exc)


def with_retry_after(response: Response, exc: ConsoleError) -> Response:
    """A 429's ``Retry-After`` (whole seconds, at least 1) on ``response``, when it has one."""
    if exc.retry_after_s is not None:
        response.headers["retry-after"] = str(max(1, math.ceil(exc.retry_after_s)))
    return response
