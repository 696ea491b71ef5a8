"""The ASGI app: endpoints wired to auth, intake, policy, forwarding, accounting.

Every forwarding endpoint (``router.dialects.BY_PATH``: Chat Completions,
completions, embeddings, Responses, Messages and count_tokens) runs the same
handler with its API's dialect; errors are answered in that API's shape.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from router import openapi
from router.accounting import UsageRecorder, UsageRow
from router.auth import Caller, KeyStore
from router.backends import Pool
from router.config import Config
from router.dialects import BY_PATH, CHAT, COMPLETIONS, Dialect
from router.errors import ProxyError, SecretMask, shape_for_path
from router.intake import check_chat, check_completions, parse_json_object, read_body
from router.limits import RateLimits, current_reservation
from router.metrics import CONTENT_TYPE, Metrics
from router.policy import Classifier, Decision, Policy, load_classifier
from router.proxy import Call, Forwarder
from router.redact import redact_urls
from router.response_ids import ResponseOwners, not_found
from router.shadow import ShadowRuns
from router.shared import shared_state
from router.streaming import cancel_on_disconnect

log = logging.getLogger("offload.app")

_TOKENS_PER_BYTE = 0.25  # prompt estimate when the upstream never reports usage
_OPENAPI = {
    "/v1/chat/completions": openapi.CHAT,
    "/v1/completions": openapi.COMPLETIONS,
    "/v1/embeddings": openapi.EMBEDDINGS,
    "/v1/responses": openapi.RESPONSES,
    "/v1/messages": openapi.MESSAGES,
    "/v1/messages/count_tokens": openapi.COUNT_TOKENS,
}


class ProxyState:
    """Everything one request needs, built once from the config (``app.state.proxy``)."""

    def __init__(self, config: Config, classifier: Classifier | None, recorder: UsageRecorder) -> None:
        self.config = config
        self.keys = KeyStore(config.auth)
        # Slots, limits and response ids: in process, or shared by the replicas (state:).
        self.shared = shared_state(config.state)
        self.limits = RateLimits([*config.auth.keys, *config.auth.admin_keys], store=self.shared.windows)
        self.owners = ResponseOwners(store=self.shared.owners)
        self.policy = Policy(config, classifier, self.owners)
        self.pool = Pool(config, self.shared.slots)
        self.recorder = recorder
        self.metrics = Metrics(self.pool, recorder)
        secrets = [b.api_key for b in config.backends.values()]
        secrets += [k.key for k in (*config.auth.keys, *config.auth.admin_keys)]
        self.forwarder = Forwarder(
            self.pool,
            config.routing.capacity,
            self.finish,
            self.metrics.fallback,
            SecretMask(secrets),
            self.owners,
        )
        self.shadows = ShadowRuns(
            config.routing.shadow_runs, self.pool, self.forwarder, recorder.record, self.metrics.shadow_run
        )
        self.store_text = config.database.store_text

    def finish(self, row: UsageRow) -> None:
        """A request is over: count it, queue its row (never waits on the database) and
        settle the tokens admit() reserved for it with what it really used."""
        from router.limits import current_reservation

        self.metrics.observe(row)
        self.recorder.record(row)
        used = row.prompt_tokens + row.completion_tokens
        reservation = current_reservation.get()  # this request's: its task's context
        if reservation.name is not None and reservation.name == row.client:
            self.limits.settle(reservation, used)
        else:
            self.limits.add_tokens(row.client, used)

    async def admit(self, request: Request) -> Caller | None:
        """The authenticated caller, counted against its per-minute limits (401/429), with an
        estimate of its tokens (Content-Length, a default output) held until finish()."""
        from router.limits import current_reservation, estimate_tokens

        caller = self.keys.caller(request.headers)
        length = request.headers.get("content-length", "")
        size = int(length) if length.isdigit() else 0
        estimate = estimate_tokens(size, default_output=self.config.server.reserve_output_tokens)
        current_reservation.set(await self.limits.enter(caller.name if caller else None, estimate))
        return caller

    def decide(
        self,
        body: dict[str, Any],
        request: Request,
        size: int,
        dialect: Dialect,
        caller: Caller | None = None,
    ) -> Decision:
        t = time.perf_counter()
        decision = self.policy.decide(body, request.headers, size, dialect, caller.name if caller else None)
        self.metrics.decision.observe(time.perf_counter() - t)
        return decision

    def new_row(
        self, caller: Caller | None, dialect: Dialect, body: dict[str, Any], size: int, decision: Decision
    ) -> UsageRow:
        model = body.get("model")
        shadow = decision.shadow
        return UsageRow(
            request_id=os.urandom(16).hex(),  # as unique as uuid4, a quarter of the cost
            started_at=datetime.now(UTC),
            endpoint=dialect.endpoint,
            api=dialect.api,
            client=caller.name if caller else None,
            model_requested=model if isinstance(model, str) else None,
            stream=dialect.streams(body),
            intent=decision.intent,
            confidence=decision.confidence,
            reason=decision.reason,
            decided_route=decision.route,
            decided_backend=decision.backend,
            shadow_backend=shadow.backend if shadow else None,
            shadow_route=shadow.route if shadow else None,
            shadow_intent=shadow.intent if shadow else None,
            prompt_tokens=int(size * _TOKENS_PER_BYTE),
            classifier_version=self.policy.classifier_version,
            arm=decision.arm,
        )

    async def restore_response_ids(self) -> None:
        """Who minted which response id, from the newest usage rows (a thread: not the loop)."""
        loaded = await asyncio.to_thread(self.owners.load, self.config.database, set(self.pool.backends))
        if loaded:
            log.info("restored %d response ids from the usage rows", loaded)


def create_app(
    config: Config,
    *,
    classifier: Classifier | None | bool = True,
    recorder: UsageRecorder | None = None,
) -> ProxyApp:
    """The proxy app. ``classifier=True`` loads the configured (or packaged) model."""
    if classifier is True:
        classifier = load_classifier(config.routing.classifier_weights)
    state = ProxyState(config, classifier or None, recorder or UsageRecorder(config.database))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await state.recorder.start()
        await state.shared.start()  # never waits long: a Redis that is away means fallback
        await state.pool.start()
        restoring = asyncio.create_task(state.restore_response_ids())
        try:
            yield
        finally:
            restoring.cancel()
            await state.shadows.stop()
            await state.pool.stop()
            await state.shared.stop()
            await state.recorder.stop()

    # redirect_slashes off: a 307 to ".../completions" built from the client's Host
    # header helps no API client (a POST body is not re-sent) and reflects the header.
    app = FastAPI(
        title="offload-router",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        redirect_slashes=False,
    )
    app.state.proxy = state

    # Until new_row, any check may refuse the request by raising ProxyError; where
    # that becomes the response (ProxyApp, or the FastAPI handler) it is counted
    # in offload_rejected_requests_total. From new_row on, Forwarder.settle counts it
    # in offload_requests_total, also when no backend could answer (route "none").
    async def forward(request: Request, dialect: Dialect) -> Response:
        t0 = time.perf_counter()
        caller = await state.admit(request)
        raw = await read_body(request, config.server)
        body = parse_json_object(raw, config.server)
        dialect.check(body, config.server)
        previous = body.get("previous_response_id")
        if isinstance(previous, str):
            # Minted on another replica? Its owner comes into the local map now: the policy
            # that reads it does no I/O.
            await state.owners.fetch(previous)
            if state.owners.foreign(previous, caller.name if caller else None):
                raise not_found(previous)  # another key's conversation: as if it did not exist
        decision = state.decide(body, request, len(raw), dialect, caller)
        _check_route_allowed(caller, decision)
        row = state.new_row(caller, dialect, body, len(raw), decision)
        if state.store_text:
            row.prompt_text = raw.decode("utf-8", "replace")
        model = body.get("model")
        call = Call(
            dialect,
            body,
            decision,
            row,
            t0,
            client_model=model if isinstance(model, str) and not state.policy.knows_model(model) else None,
            headers=_forwarded(request, dialect),
            query=request.scope.get("query_string", b"").decode("latin-1")
            if dialect.forwards_headers
            else "",
            allowed=caller.routes if caller else None,
        )
        state.shadows.consider(call)
        request.scope.setdefault("state", {})["call"] = call  # ProxyApp: call.answered() once sent

        def disconnected() -> Response:
            state.forwarder.settle(call, 499, None, error_type="client_disconnected")
            return Response(status_code=499)

        # Wait for the upstream's answer (or a stream's first bytes), cancelling the moment
        # the client leaves; once a stream flows, RelayResponse watches instead. Cancelling
        # closes the upstream connection, and vLLM aborts a request whose connection closed:
        # the slot is free again at once.
        return await cancel_on_disconnect(request.receive, state.forwarder.forward(call), disconnected)

    hot: dict[str, Callable[[Request], Awaitable[Response]]] = {}
    for path, dialect in BY_PATH.items():
        hot[path] = _endpoint(forward, dialect)
        app.add_api_route(path, hot[path], methods=["POST"], openapi_extra=_OPENAPI[path])

    # What a client may put in `model`: auto, the route aliases, backend names, upstream models.
    model_ids = ["auto", *(n for n in ("local", "cloud") if config.backend_for_route(n))]
    model_ids += [n for n in config.backends if n not in model_ids]
    model_ids += [b.model for b in config.backends.values() if b.model not in model_ids]

    @app.get("/v1/models")
    async def models(request: Request) -> Response:
        state.keys.caller(request.headers)
        created = int(time.time())
        data = [
            {"id": i, "object": "model", "created": created, "owned_by": "offload-router"} for i in model_ids
        ]
        return _json({"object": "list", "data": data})

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    async def root() -> Response:
        """Anthropic clients use the host root as their base URL and probe it (Claude Code: ``HEAD /``)."""
        return _json({"service": "offload-router", "status": "ok"})

    @app.post("/offload/route", openapi_extra=openapi.CHAT)
    async def route(request: Request) -> Response:
        """The decision for a request body; nothing is forwarded."""
        state.keys.caller(request.headers)
        raw = await read_body(request, config.server)
        body = parse_json_object(raw, config.server)
        if "messages" in body:
            check_chat(body, config.server)
            dialect = CHAT
        else:
            check_completions(body)
            dialect = COMPLETIONS
        decision = state.decide(body, request, len(raw), dialect)
        return _json(
            decision.as_dict(),
            {"x-offload-route": decision.backend, "x-offload-intent": decision.intent or "none"},
        )

    @app.get("/healthz")
    async def healthz() -> Response:
        return _json({"status": "ok"})

    @app.get("/readyz")
    async def readyz() -> Response:
        """Ready when at least one backend can take traffic; each backend's state."""
        backends = {name: b.state() for name, b in state.pool.backends.items()}
        ready = any(b.up for b in state.pool.backends.values())
        body: dict[str, Any] = {"ready": ready, "backends": backends}
        shared = state.shared.status()  # None in process; Redis down is not unready: it falls back
        if shared is not None:
            body["shared_state"] = shared
        return _json(body, status=200 if ready else 503)

    @app.get("/metrics")
    async def metrics() -> Response:
        return Response(state.metrics.render(), media_type=CONTENT_TYPE)

    @app.get("/offload/state")
    async def offload_state(request: Request) -> Response:
        """Admin: the pool's state (as in /readyz) and the config, secrets redacted."""
        state.keys.require_admin(request.headers)
        backends = {name: b.state() for name, b in state.pool.backends.items()}
        shadow = {"shadow_runs": {"enabled": state.shadows.enabled}}
        return _json({"backends": backends, **shadow, "config": redacted_config(config)})

    @app.post("/offload/state", openapi_extra=openapi.STATE_SWITCHES)
    async def change_state(request: Request) -> Response:
        """Admin: switches that act at once. ``{"shadow_runs": false}`` stops shadow runs,
        in-flight copies included."""
        state.keys.require_admin(request.headers)
        body = parse_json_object(await read_body(request, config.server), config.server)
        unknown = sorted(set(body) - {"shadow_runs"})
        if unknown or not isinstance(body.get("shadow_runs"), bool):
            raise ProxyError(400, 'send {"shadow_runs": true|false}', param=(unknown or ["shadow_runs"])[0])
        state.shadows.switch(body["shadow_runs"])
        return _json({"shadow_runs": {"enabled": state.shadows.enabled}})

    from router import console  # the web console at /offload/console (admin key)

    app.include_router(console.router(state))
    _install_error_handlers(app, state.metrics)
    return ProxyApp(app, hot, state.metrics, state.limits)


def _endpoint(
    forward: Callable[[Request, Dialect], Awaitable[Response]], dialect: Dialect
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        return await forward(request, dialect)

    endpoint.__name__ = dialect.endpoint
    return endpoint


class ProxyApp:
    """FastAPI for everything, except that the forwarding endpoints skip its
    middleware stack: same handlers, about a third less CPU per request
    (bench/README.md). The OpenAPI document still describes them.
    """

    def __init__(
        self,
        app: FastAPI,
        hot: dict[str, Callable[[Request], Awaitable[Response]]],
        metrics: Metrics,
        limits: RateLimits,
    ) -> None:
        self.app = app
        self.state = app.state
        self.hot = hot
        self.metrics = metrics
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler = self.hot.get(scope["path"]) if scope["type"] == "http" else None
        if handler is None or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            response = await handler(request)
        except ProxyError as exc:
            self.metrics.rejected(exc)  # refused before forwarding (auth, limits, intake)
            # Refused: it used nothing, so the tokens admit() held for it go back at once.
            self.limits.settle(current_reservation.get(), 0)
            response = exc.response(shape=shape_for_path(scope["path"]))
        except Exception as exc:
            response = _internal_error(request, exc)
        try:
            await response(scope, receive, send)
        finally:
            call = scope.get("state", {}).get("call")
            if call is not None:
                call.answered()


# ---------------------------------------------------------------- helpers


_SECRET_NAMES = ("key", "secret", "password", "token")


def redacted_config(config: Config) -> dict[str, Any]:
    """The config as JSON with every secret replaced by ``"<redacted>"``.

    Redacts by name (any string field whose name mentions key, secret,
    password or token, except the ``*_env`` fields that only name a variable)
    and any credential in a URL, so that secrets added later stay hidden too.
    """
    return _redact(config.model_dump(mode="json"))


def _redact(value: Any, name: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, name) for v in value]
    if isinstance(value, str):
        lowered = name.lower()
        if value and not lowered.endswith("_env") and any(s in lowered for s in _SECRET_NAMES):
            return "<redacted>"
        return redact_urls(value)
    return value


def _json(payload: Any, headers: dict[str, str] | None = None, status: int = 200) -> Response:
    return Response(orjson.dumps(payload), status_code=status, media_type="application/json", headers=headers)


def _forwarded(request: Request, dialect: Dialect) -> dict[str, str] | None:
    """The client headers that travel upstream as they are (Messages: anthropic-version, -beta)."""
    if not dialect.forwards_headers:
        return None
    headers = request.headers
    return {name: headers[name] for name in dialect.forwards_headers if name in headers}


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


def _install_error_handlers(app: FastAPI, metrics: Metrics) -> None:
    @app.exception_handler(ProxyError)
    async def proxy_error(request: Request, exc: ProxyError) -> Response:
        metrics.rejected(exc)  # e.g. 401 on /v1/models, 403 on /offload/state, 400 on /offload/route
        return exc.response(shape=shape_for_path(request.url.path))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            message = f"unknown path {request.url.path}"
        elif exc.status_code == 405:
            message = f"method {request.method} is not allowed on {request.url.path}"
        else:
            message = str(exc.detail)
        error = ProxyError(exc.status_code, message, headers=dict(exc.headers or {}))
        return error.response(shape=shape_for_path(request.url.path))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        return ProxyError(400, "invalid request").response(shape=shape_for_path(request.url.path))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        return _internal_error(request, exc)


def _internal_error(request: Request, exc: Exception) -> Response:
    # Log the type and place, never the request (it may carry keys or text).
    log.error("internal error on %s: %s", request.url.path, type(exc).__name__, exc_info=exc)
    error = ProxyError(500, "internal error in offload-router", code="internal_error")
    return error.response(shape=shape_for_path(request.url.path))


__all__ = ["create_app"]
