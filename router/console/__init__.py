"""The offload console at ``/offload/console``: the month's money, the backends now, the
router's decisions, and people's labels on them.

Server-rendered HTML (Jinja2 templates, SVG charts drawn on the server), no script and
nothing fetched from elsewhere. It needs an admin key (``router.console.session``), and
it never slows the request path: its queries and renders run in its own threads with
its own connections (``router.console.service``).

    routes     views.py      the pages and forms
    who, CSRF  session.py    the admin session cookie, CSRF tokens, Origin checks
    SQL        queries.py    every query, each served by an index
    work       service.py    threads, connections, the month figures' cache
    display    present.py, charts.py, render.py, templates/, static/
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter

from router.console.service import Console
from router.console.session import Sessions, load_secret, secret_path
from router.console.views import build

if TYPE_CHECKING:
    from router.edge.state import ProxyState


def router(state: ProxyState, *, ttl_s: float = 60.0) -> APIRouter:
    """The console's routes for one proxy; ``ttl_s``: how old a month in progress's figures
    may get before a view has them recomputed in the background."""
    auth = state.config.auth
    secret = load_secret(auth, secret_path(auth, state.config.database))
    return build(Console(state.config, ttl_s=ttl_s), Sessions(auth, state.keys, secret=secret), state.pool)
