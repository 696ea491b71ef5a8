"""The proxy's HTTP endpoints: one table, served and documented from the same entries.

Every endpoint is one :class:`Route` of :func:`routes`. FastAPI serves them and builds the
OpenAPI document from them; :class:`router.edge.dispatch.ProxyApp` sends the forwarding
ones (``hot``) straight to their handler, skipping FastAPI's middleware stack, so the
document describes exactly what runs.

A forwarding request: authenticated and admitted against its key's limits, read and parsed
once, checked by its dialect, decided, then handed to the forwarder as one immutable
:class:`~router.forward.call.Call`. Until the call exists any check may refuse the request by
raising ProxyError (counted in ``offload_rejected_requests_total``); from then on the forwarder
answers, and the request ends in ``ProxyState.finish`` (``offload_requests_total``), also
when no backend could answer (route ``none``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from fastapi import Request
from starlette.responses import Response

from router.config import Config
from router.decide.policy import Decision
from router.dialects import BY_PATH, CHAT, COMPLETIONS, ROUTE_APIS, Dialect
from router.edge import openapi
from router.edge.auth import Caller
from router.edge.intake import parse_json_object, read_body
from router.edge.limits import Reservation, estimate_tokens
from router.edge.metrics import CONTENT_TYPE
from router.edge.state import ProxyState
from router.errors import ProxyError
from router.forward.call import Call, Facts
from router.forward.plan import route_plan
from router.forward.response_ids import not_found
from router.redact import redact_secrets
from router.sessions import session_of
from router.tokens import prompt_tokens

Handler = Callable[[Request], Awaitable[Response]]

_OPENAPI = {
    "/v1/chat/completions": openapi.CHAT,
    "/v1/completions": openapi.COMPLETIONS,
    "/v1/embeddings": openapi.EMBEDDINGS,
    "/v1/responses": openapi.RESPONSES,
    "/v1/messages": openapi.MESSAGES,
    "/v1/messages/count_tokens": openapi.COUNT_TOKENS,
}


@dataclass(frozen=True, slots=True)
class Route:
    path: str
    methods: tuple[str, ...]
    endpoint: Callable[..., Awaitable[Response]]  # FastAPI reads its parameters
    openapi_extra: dict[str, Any] | None = None
    include_in_schema: bool = True
    hot: bool = False  # a forwarding endpoint: dispatched by ProxyApp itself


def routes(state: ProxyState) -> list[Route]:
    """Every endpoint of the proxy (the console aside), in the OpenAPI document's order."""
    forwarding = Forwarding(state)
    plain = Endpoints(state)
    table = [
        Route(path, ("POST",), forwarding.endpoint(dialect), _OPENAPI[path], hot=True)
        for path, dialect in BY_PATH.items()
    ]
    return [
        *table,
        Route("/v1/models", ("GET",), plain.models),
        Route("/", ("GET", "HEAD"), plain.root, include_in_schema=False),
        Route("/offload/route", ("POST",), plain.route, openapi.CHAT),
        Route("/healthz", ("GET",), plain.healthz),
        Route("/readyz", ("GET",), plain.readyz),
        Route("/metrics", ("GET",), plain.metrics),
        Route("/offload/state", ("GET",), plain.offload_state),
        Route("/offload/state", ("POST",), plain.change_state, openapi.STATE_SWITCHES),
    ]


class Forwarding:
    """The handler of every forwarding endpoint, one per API's dialect."""

    def __init__(self, state: ProxyState) -> None:
        self.state = state
        self.config = state.config

    def endpoint(self, dialect: Dialect) -> Handler:
        async def endpoint(request: Request) -> Response:
            return await self.forward(request, dialect)

        endpoint.__name__ = dialect.endpoint
        return endpoint

    async def forward(self, request: Request, dialect: Dialect) -> Response:
        t0 = time.perf_counter()
        caller = self.state.keys.caller(request.headers)  # 401 before anything is read
        server = self.config.server
        raw = await read_body(request, server)
        body = parse_json_object(raw, server)
        dialect.check(body, server)
        reservation = await self._admit(caller, raw, body)
        try:
            call = await self._call(request, dialect, caller, reservation, t0, raw, body)
        except ProxyError:
            # Refused: it used nothing, so the tokens admission held for it go back at once.
            self.state.limits.settle(reservation, 0)
            raise
        return await self.state.forwarder.forward(call, request.receive)

    async def _admit(self, caller: Caller | None, raw: bytes, body: dict[str, Any]) -> Reservation:
        """Count the request against its key's per-minute limits (429), holding an estimate of
        its tokens until it finishes: the prompt from the body as read (chunked bodies too),
        plus the output it asks for (``max_tokens`` and its kin), else a default."""
        estimate = estimate_tokens(len(raw), body, default_output=self.config.server.reserve_output_tokens)
        return await self.state.limits.enter(caller.name if caller else None, estimate)

    async def _call(
        self,
        request: Request,
        dialect: Dialect,
        caller: Caller | None,
        reservation: Reservation,
        t0: float,
        raw: bytes,
        body: dict[str, Any],
    ) -> Call:
        state = self.state
        client = caller.name if caller else None
        previous = body.get("previous_response_id")
        chained = None
        if isinstance(previous, str):
            # Minted on another replica? Its owner comes into the local map now: the policy
            # that reads it does no I/O.
            await state.owners.fetch(previous)
            if state.owners.foreign(previous, client):
                raise not_found(previous)  # another key's conversation: as if it did not exist
            chained = state.owners.session(previous, client)
        session = session_of(dialect.api, body, request.headers, chained)
        # Where its last turn ran: I/O only when replicas share sessions (state:).
        seen = await state.sessions.fetch(client, session) if session is not None else None
        decision = state.decide(body, request.headers, len(raw), dialect, caller, session, seen)
        _check_route_allowed(caller, decision)
        gate_run = _gate_run(request, caller)
        model = body.get("model")
        model = model if isinstance(model, str) else None
        allowed = caller.routes if caller else None
        return Call(
            self._facts(raw, body, dialect, caller, model, t0, gate_run, session),
            dialect,
            body,
            decision,
            client_model=model if model is not None and not state.policy.knows_model(model) else None,
            headers=_forwarded(request, dialect),
            query=request.scope.get("query_string", b"").decode("latin-1")
            if dialect.forwards_headers
            else "",
            allowed=allowed,
            reservation=reservation,
            shadow_arm=state.shadows.arm_for(decision, dialect, allowed),
            seen=seen,
        )

    def _facts(
        self,
        raw: bytes,
        body: dict[str, Any],
        dialect: Dialect,
        caller: Caller | None,
        model: str | None,
        t0: float,
        gate_run: str | None = None,
        session: str | None = None,
    ) -> Facts:
        store_text = self.config.database.store_text
        return Facts(
            request_id=os.urandom(16).hex(),  # as unique as uuid4, a quarter of the cost
            started_at=datetime.now(UTC),
            t0=t0,
            endpoint=dialect.endpoint,
            api=dialect.api,
            client=caller.name if caller else None,
            model_requested=model,
            stream=dialect.streams(body),
            prompt_estimate=prompt_tokens(len(raw)),
            classifier_version=self.state.policy.classifier_version,
            store_text=store_text,
            prompt_text=raw.decode("utf-8", "replace") if store_text else None,
            gate_run=gate_run,
            session=session,
        )


class Endpoints:
    """The endpoints that forward nothing: models, the decision alone, health, metrics, admin."""

    def __init__(self, state: ProxyState) -> None:
        self.state = state
        self.config = config = state.config
        # What a client may put in `model`: auto, the route aliases, backend names, upstream models.
        ids = ["auto", *(n for n in ("local", "cloud") if config.backend_for_route(n))]
        ids += [n for n in config.backends if n not in ids]
        ids += [b.model for b in config.backends.values() if b.model not in ids]
        self.model_ids = ids

    async def models(self, request: Request) -> Response:
        self.state.keys.caller(request.headers)
        created = int(time.time())
        data = [
            {"id": i, "object": "model", "created": created, "owned_by": "offload-router"}
            for i in self.model_ids
        ]
        return json_response({"object": "list", "data": data})

    async def root(self) -> Response:
        """Anthropic clients use the host root as their base URL and probe it (Claude Code: ``HEAD /``)."""
        return json_response({"service": "offload-router", "status": "ok"})

    async def route(self, request: Request) -> Response:
        """The decision for a request body of ``?api=chat|responses|messages`` (chat when
        absent), and the backend that would serve it; nothing is forwarded."""
        caller = self.state.keys.caller(request.headers)
        server = self.config.server
        api = request.query_params.get("api", "chat")
        if api not in ROUTE_APIS:
            raise ProxyError(400, f"api must be one of {', '.join(ROUTE_APIS)}, got {api!r}", param="api")
        raw = await read_body(request, server)
        body = parse_json_object(raw, server)
        dialect = ROUTE_APIS[api]
        if dialect is CHAT and "messages" not in body:
            dialect = COMPLETIONS
        dialect.check(body, server)
        decision = self.state.decide(body, request.headers, len(raw), dialect, caller)
        plan = route_plan(self.state.pool, decision, dialect.api, caller.routes if caller else None)
        return json_response(
            plan,
            {"x-offload-route": plan["backend"] or "none", "x-offload-intent": decision.intent or "none"},
        )

    async def healthz(self) -> Response:
        return json_response({"status": "ok"})

    async def readyz(self, request: Request) -> Response:
        """Ready when at least one backend can take traffic; each backend's state. Without
        an admin key (and ``server.public_details`` off) no model name or endpoint URL."""
        pool = self.state.pool
        details = self._shows_details(request)
        backends = {name: public_state(b.state(), details) for name, b in pool.backends.items()}
        ready = any(b.up for b in pool.backends.values())
        body: dict[str, Any] = {"ready": ready, "backends": backends}
        shared = self.state.shared.status()  # None in process; Redis down is not unready: it falls back
        if shared is not None:
            body["shared_state"] = (
                shared if details else {k: v for k, v in shared.items() if k != "endpoints"}
            )
        return json_response(body, status=200 if ready else 503)

    def _shows_details(self, request: Request) -> bool:
        """Models and URLs for an admin (or anyone, on an open loopback proxy or when the
        config says so); a probe or a stranger gets states and counts only."""
        if self.config.server.public_details or self.state.keys.open:
            return True
        try:
            return self.state.keys.require_admin(request.headers) is not None
        except ProxyError:
            return False

    async def metrics(self) -> Response:
        return Response(self.state.metrics.render(), media_type=CONTENT_TYPE)

    async def offload_state(self, request: Request) -> Response:
        """Admin: the pool's state (as in /readyz) and the config, secrets redacted."""
        state = self.state
        state.keys.require_admin(request.headers)
        backends = {name: b.state() for name, b in state.pool.backends.items()}
        shadow = {"shadow_runs": {"enabled": state.shadows.enabled}}
        return json_response({"backends": backends, **shadow, "config": redacted_config(self.config)})

    async def change_state(self, request: Request) -> Response:
        """Admin: switches that act at once. ``{"shadow_runs": false}`` stops shadow runs,
        in-flight copies included."""
        state = self.state
        state.keys.require_admin(request.headers)
        body = parse_json_object(await read_body(request, self.config.server), self.config.server)
        unknown = sorted(set(body) - {"shadow_runs"})
        if unknown or not isinstance(body.get("shadow_runs"), bool):
            raise ProxyError(400, 'send {"shadow_runs": true|false}', param=(unknown or ["shadow_runs"])[0])
        state.shadows.switch(body["shadow_runs"])
        return json_response({"shadow_runs": {"enabled": state.shadows.enabled}})


def public_state(state: dict[str, Any], details: bool) -> dict[str, Any]:
    """A backend's /readyz entry, without its model and endpoint URLs unless ``details``."""
    if details:
        return state
    endpoints = [{k: v for k, v in e.items() if k != "url"} for e in state.get("endpoints", ())]
    return {**{k: v for k, v in state.items() if k != "model"}, "endpoints": endpoints}


def redacted_config(config: Config) -> dict[str, Any]:
    """The config as JSON with every secret replaced by ``"<redacted>"`` (router.redact)."""
    return redact_secrets(config.model_dump(mode="json"))


def json_response(payload: Any, headers: dict[str, str] | None = None, status: int = 200) -> Response:
    return Response(orjson.dumps(payload), status_code=status, media_type="application/json", headers=headers)


def _forwarded(request: Request, dialect: Dialect) -> dict[str, str] | None:
    """The client headers that travel upstream as they are (Messages: anthropic-version, -beta)."""
    if not dialect.forwards_headers:
        return None
    headers = request.headers
    return {name: headers[name] for name in dialect.forwards_headers if name in headers}


def _gate_run(request: Request, caller: Caller | None) -> str | None:
    """``x-offload-gate: <run id>``: the request belongs to an ``offload gate`` run, and its row
    is left out of the month's traffic. Only an admin key (or a proxy without keys) may say so:
    any other key could hide its own traffic from the report."""
    run = request.headers.get("x-offload-gate")
    if not run:
        return None
    if caller is not None and not caller.admin:
        raise ProxyError(
            403, "x-offload-gate needs an admin key", param="x-offload-gate", code="admin_required"
        )
    if len(run) > 64:
        raise ProxyError(400, "x-offload-gate: a run id of at most 64 characters", param="x-offload-gate")
    return run


def _check_route_allowed(caller: Caller | None, decision: Decision) -> None:
    if caller is None or caller.routes is None:
        return
    if decision.route not in caller.routes and decision.backend not in caller.routes:
        raise ProxyError(
            403,
            f"key {caller.name!r} may not use route {decision.route!r}",
            code="route_not_allowed",
            headers={"x-offload-route": decision.backend},
        )
