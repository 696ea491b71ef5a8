"""The console's routes: four views, the decision page, the label and login forms.

Each handler of :class:`Views` says what to read and which template shows it;
:meth:`Views.page` and :meth:`Views.form` do the rest in one place (who is asking, CSRF,
errors, headers); :func:`build` is the route table.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from router.config import INTENTS, Config
from router.console import charts, present, queries, render
from router.console.service import Console, MonthFigures
from router.console.session import COOKIE, PATH, ConsoleError, Session, Sessions, client_address
from router.decide.reasons import Reason, all_texts
from router.forward.backends import Pool
from router.ledger.report import month_bounds

log = logging.getLogger("offload.console")

MAX_FORM_BYTES = 16 * 1024
_CSS = resources.files("router.console").joinpath("static/console.css").read_bytes()
_SHORT = 200  # longest filter value accepted


@dataclass(slots=True)
class Page:
    template: str
    context: dict[str, Any] = field(default_factory=dict)
    status: int = 200


def this_month() -> str:
    return datetime.now(UTC).strftime("%Y-%m")


def build(console: Console, sessions: Sessions, pool: Pool) -> APIRouter:
    """The console's routes, under ``/offload/console``."""
    views = Views(console, sessions, pool)
    api = APIRouter(prefix=PATH, include_in_schema=False)
    api.add_api_route("", views.home, methods=["GET"])
    api.add_api_route("/console.css", views.stylesheet, methods=["GET"])
    api.add_api_route("/login", views.login_page, methods=["GET"])
    api.add_api_route("/login", views.login, methods=["POST"])
    api.add_api_route("/logout", views.form(views.logout), methods=["POST"])
    pages = {
        "/month": views.month,
        "/now": views.now,
        "/decisions": views.decisions,
        "/decisions/{request_id}": views.decision,
        "/labels": views.labels,
        "/gate": views.gate,
    }
    for path, view in pages.items():
        api.add_api_route(path, views.page(view), methods=["GET"])
    api.add_api_route("/decisions/{request_id}/label", views.form(views.label), methods=["POST"])
    return api


class Views:
    """The console's handlers. Each says what to read and which template shows it;
    :meth:`page` and :meth:`form` do the rest in one place (who is asking, CSRF, errors,
    headers)."""

    def __init__(self, console: Console, sessions: Sessions, pool: Pool) -> None:
        self.console = console
        self.sessions = sessions
        self.pool = pool
        self.config = console.config

    def page(
        self,
        view: Callable[[Request, Session], Awaitable[Page]],
    ) -> Callable[[Request], Awaitable[Response]]:
        """A GET view: who is asking, the view's data, its template rendered in a console
        thread, the security headers; any ConsoleError rendered by render.error_response."""

        async def endpoint(request: Request) -> Response:
            try:
                viewer = self.sessions.viewer(request)
                _warm(self.console)
                shown = await view(request, viewer)
                context = {**shown.context, "viewer": viewer, "csrf": _csrf(self.sessions, viewer)}
                response: Response = render.html(await self.console.run(render.page, shown.template, context))
                response.status_code = shown.status
                if viewer.new:
                    self.sessions.set_cookie(response, viewer, request)
            except ConsoleError as exc:
                response = render.error_response(exc)
            except Exception as exc:
                response = _internal(request, exc)
            return response

        endpoint.__name__ = view.__name__
        return endpoint

    def form(
        self,
        action: Callable[[Request, Session, dict[str, str]], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        """A POST: its form read (bounded), its session's CSRF token and its Origin checked."""

        async def endpoint(request: Request) -> Response:
            try:
                form = await _read_form(request)
                session = self.sessions.check_post(request, form.get("csrf", ""))
                return await action(request, session, form)
            except ConsoleError as exc:
                return render.error_response(exc)
            except Exception as exc:
                return _internal(request, exc)

        endpoint.__name__ = action.__name__
        return endpoint

    # ---------------------------------------------------------------- login

    async def home(self) -> Response:
        return render.redirect(f"{PATH}/month")

    async def stylesheet(self) -> Response:
        return Response(_CSS, media_type="text/css", headers={"cache-control": "max-age=3600"})

    async def login_page(self, request: Request) -> Response:
        session = self.sessions.read(request)
        if (session is not None and session.name is not None) or self.sessions.open:
            return render.redirect(f"{PATH}/month")
        session = session or self.sessions.issue(None)
        _warm(self.console)  # while the key is typed
        return await self._login_form(
            request, session, None, 200, _safe_next(request.query_params.get("next", ""))
        )

    async def _login_form(
        self, request: Request, session: Session, message: str | None, status: int, next_page: str
    ) -> Response:
        context = {"csrf": self.sessions.csrf(session), "message": message, "next": next_page}
        response = render.html(await self.console.run(render.page, "login.html", context), status)
        if session.new:
            self.sessions.set_cookie(response, session, request)
        return response

    async def login(self, request: Request) -> Response:
        try:
            form = await _read_form(request)
            anonymous = self.sessions.check_post(request, form.get("csrf", ""), logging_in=True)
        except ConsoleError as exc:
            return render.error_response(exc)
        try:
            session = self.sessions.login(form.get("key", ""), client_address(request))
        except ConsoleError as exc:
            response = await self._login_form(
                request, anonymous, exc.message, exc.status, _safe_next(form.get("next", ""))
            )
            return render.with_retry_after(response, exc)
        response = render.redirect(_safe_next(form.get("next", "")))
        self.sessions.set_cookie(response, session, request)
        return response

    async def logout(self, request: Request, session: Session, form: dict[str, str]) -> Response:
        self.sessions.revoke(session)  # a copy of the cookie stops working too
        response = render.redirect(f"{PATH}/login")
        response.delete_cookie(COOKIE, path=PATH, httponly=True, samesite="strict")
        return response

    # ---------------------------------------------------------------- month

    async def month(self, request: Request, viewer: Session) -> Page:
        wanted = request.query_params.get("month") or this_month()
        try:
            start, _ = month_bounds(wanted)
        except ValueError as exc:
            raise ConsoleError(400, str(exc)) from None
        figures = await self.console.months.get(wanted)
        return Page("month.html", {"nav": "month", **_month_context(figures, start)})

    # ---------------------------------------------------------------- now

    async def now(self, request: Request, viewer: Session) -> Page:
        backends = {name: b.state() for name, b in self.pool.backends.items()}
        fallbacks: list[dict[str, Any]] = []
        last_hour: dict[str, int] = {}
        unreadable = None
        try:
            fallbacks = await self.console.read(queries.recent_fallbacks)
            last_hour = await self.console.read(
                queries.fallbacks_since, datetime.now(UTC) - timedelta(hours=1)
            )
        except ConsoleError as exc:
            unreadable = exc.message
        context = {
            "nav": "now",
            "backends": backends,
            "fallbacks": fallbacks,
            "last_hour": last_hour,
            "unreadable": unreadable,
            "probe_s": self.config.health.interval_s,
            "now": datetime.now(UTC),
        }
        return Page("now.html", context)

    # ---------------------------------------------------------------- decisions

    async def decisions(self, request: Request, viewer: Session) -> Page:
        filters = _filters(request)
        rows = await self.console.read(queries.decisions, filters, self.config.routing.confidence_floor)
        older = None
        if len(rows) == queries.PAGE:
            last = rows[-1]
            older = f"{last['started_at'].isoformat()}~{last['id']}"
        context = {
            "nav": "decisions",
            "rows": rows,
            "filters": filters,
            "params": filters.without_page(),
            "older": older,
            "intents": INTENTS,
            "routes": _routes(self.config),
            "reasons": all_texts(Reason, (rule.name for rule in self.config.routing.rules)),
            "explained": tuple(Reason),
            "clients": [k.name for k in (*self.config.auth.keys, *self.config.auth.admin_keys)],
            "floor": self.config.routing.confidence_floor,
        }
        return Page("decisions.html", context)

    async def decision(self, request: Request, viewer: Session) -> Page:
        request_id = request.path_params["request_id"]
        row = await self.console.read(queries.decision, request_id)
        if row is None:
            raise ConsoleError(404, "no such request")
        context = {
            "nav": "decisions",
            "row": row,
            "parts": await self.console.run(present.request_parts, row),
            "store_text": self.config.database.store_text,
            "intents": INTENTS,
            "labelled": request.query_params.get("labelled") == "1",
        }
        return Page("decision.html", context)

    # ---------------------------------------------------------------- labels

    async def label(self, request: Request, session: Session, form: dict[str, str]) -> Response:
        request_id = request.path_params["request_id"]
        intent = form.get("intent", "")
        if intent not in INTENTS:
            raise ConsoleError(400, f"unknown intent: choose one of {', '.join(INTENTS)}")
        if not await self.console.write(
            queries.set_label, request_id, intent, session.who, datetime.now(UTC)
        ):
            raise ConsoleError(404, "no such request")
        return render.redirect(f"{PATH}/decisions/{request_id}?labelled=1")

    async def labels(self, request: Request, viewer: Session) -> Page:
        latest = await self.console.read(queries.latest_labels)
        pairs = await self.console.read(queries.label_pairs)
        context = {
            "nav": "labels",
            "latest": latest,
            "agreement": present.agreement(pairs, present.route_of_intents(self.config)),
            "month": this_month(),
        }
        return Page("labels.html", context)

    # ---------------------------------------------------------------- gate

    async def gate(self, request: Request, viewer: Session) -> Page:
        return Page("gate.html", {"nav": "gate", **await self.console.run(_gate_context, self.config)})


def _gate_context(config: Config) -> dict[str, Any]:
    """The Gate page: the latest runs, the evidence, the proposal against the current table
    (``router.gate``); read in a console thread."""
    from router.gate import propose, show, store

    url = config.database.url
    evidence = store.evidence(url) if config.database.enabled else {}
    proposal = propose.propose(config, evidence)
    return {
        "runs": store.runs(url, limit=10) if config.database.enabled else [],
        "table": show.table(config, evidence),
        "proposal": proposal,
        "diff": proposal.diff(dict(config.routing.intents)),
    }


# ---------------------------------------------------------------- helpers


def _warm(console: Console) -> None:
    """The current month's figures take seconds on a big database: start them early."""
    if console.recording:
        console.months.warm(this_month())


def _csrf(sessions: Sessions, viewer: Session) -> str | None:
    """A session cookie's token; none for a script that sent its key (it cannot POST)."""
    return sessions.csrf(viewer) if viewer.cookie else None


def _month_context(figures: MonthFigures, start: datetime) -> dict[str, Any]:
    labels = [d.day.strftime("%d") for d in figures.days]
    share = charts.bar_chart(
        "Local share of answered requests, by day (UTC)",
        labels,
        [d.local_share for d in figures.days],
        top=1.0,
        fmt=lambda v: f"{v:.0%}",
    )
    fallbacks = charts.bar_chart(
        "Fallbacks by day (UTC)",
        labels,
        [float(d.fallbacks) if d.requests else None for d in figures.days],
        whole=True,
    )
    previous = (start - timedelta(days=1)).strftime("%Y-%m")
    following = (start + timedelta(days=32)).strftime("%Y-%m")
    return {
        "figures": figures,
        "r": figures.report,
        "charts": [share, fallbacks],
        "previous": previous,
        "following": following if following <= this_month() else None,
    }


def _routes(config: Config) -> list[str]:
    return sorted({b.route_name for b in config.backends.values()})


def _filters(request: Request) -> queries.Filters:
    q = request.query_params
    values = {k: (q.get(k) or "").strip() or None for k in ("route", "intent", "reason", "client")}
    if any(v is not None and len(v) > _SHORT for v in values.values()):
        raise ConsoleError(400, "filter value too long")
    if values["intent"] not in (None, queries.NO_INTENT, *INTENTS):
        raise ConsoleError(400, f"unknown intent: choose one of {', '.join(INTENTS)}")
    return queries.Filters(**values, low_confidence=q.get("low") == "1", before=_before(q.get("before")))


def _before(value: str | None) -> tuple[datetime, int] | None:
    """The Decisions view's page position, ``<started_at ISO>~<id>``."""
    if not value:
        return None
    at, _, row_id = value.partition("~")
    try:
        when = datetime.fromisoformat(at)
        return (when if when.tzinfo else when.replace(tzinfo=UTC)), int(row_id)
    except ValueError:
        raise ConsoleError(400, "bad page position") from None


async def _read_form(request: Request) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body of at most MAX_FORM_BYTES; one value per field."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
        raise ConsoleError(415, "expected a form")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise ConsoleError(413, "form too large")
    try:
        fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=20)
    except ValueError:
        raise ConsoleError(400, "too many form fields") from None
    return {k: v[0] for k, v in fields.items()}


def _safe_next(target: str) -> str:
    """Where to go after login: a console page, never another site."""
    if target.startswith(f"{PATH}/") and "//" not in target and "\\" not in target:
        return target
    return f"{PATH}/month"


def _internal(request: Request, exc: Exception) -> Response:
    # The type and place only: the request may carry a key or text.
    log.error("console: internal error on %s: %s", request.url.path, type(exc).__name__, exc_info=exc)
    return render.error_response(ConsoleError(500, "internal error in the console"))
