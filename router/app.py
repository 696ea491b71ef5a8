"""The ASGI app: endpoints wired to auth, intake, policy, forwarding, accounting."""

from __future__ import annotations

import logging
import os
import re
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
from router.errors import ProxyError
from router.intake import check_chat, check_completions, check_embeddings, parse_json_object, read_body
from router.limits import RateLimits
from router.metrics import CONTENT_TYPE, Metrics
from router.policy import Classifier, Decision, Policy, load_classifier
from router.proxy import Forwarder
from router.streaming import until_disconnect

log = logging.getLogger("offload.app")

_PATHS = {"chat": "/chat/completions", "completions": "/completions", "embeddings": "/embeddings"}
_TOKENS_PER_BYTE = 0.25  # prompt estimate when the upstream never reports usage


class Router:
    """Everything one request needs, built once from the config."""

    def __init__(self, config: Config, classifier: Classifier | None, recorder: UsageRecorder) -> None:
        self.config = config
        self.keys = KeyStore(config.auth)
        self.limits = RateLimits([*config.auth.keys, *config.auth.admin_keys])
        self.policy = Policy(config, classifier)
        self.pool = Pool(config)
        self.recorder = recorder
        self.metrics = Metrics(self.pool, recorder)
        self.forwarder = Forwarder(self.pool, config.routing.capacity, self.finish, self.metrics.fallback)
        self.store_text = config.database.store_text

    def finish(self, row: UsageRow) -> None:
        """A request is over: count it and queue its row (never waits on the database)."""
        self.metrics.observe(row)
        self.recorder.record(row)
        self.limits.add_tokens(row.client, row.prompt_tokens + row.completion_tokens)

    def admit(self, request: Request) -> Caller | None:
        """The authenticated caller, counted against its per-minute limits (401/429)."""
        caller = self.keys.caller(request.headers)
        self.limits.admit(caller.name if caller else None)
        return caller

    def decide(self, body: dict[str, Any], request: Request, size: int) -> Decision:
        t = time.perf_counter()
        decision = self.policy.decide(body, request.headers, size)
        self.metrics.decision.observe(time.perf_counter() - t)
        return decision

    def new_row(
        self, caller: Caller | None, endpoint: str, body: dict[str, Any], size: int, decision: Decision
    ) -> UsageRow:
        model = body.get("model")
        shadow = decision.shadow
        return UsageRow(
            request_id=os.urandom(16).hex(),  # as unique as uuid4, a quarter of the cost
            started_at=datetime.now(UTC),
            endpoint=endpoint,
            client=caller.name if caller else None,
            model_requested=model if isinstance(model, str) else None,
            stream=body.get("stream") is True,
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
        )


def create_app(
    config: Config,
    *,
    classifier: Classifier | None | bool = True,
    recorder: UsageRecorder | None = None,
) -> ProxyApp:
    """The proxy app. ``classifier=True`` loads the configured (or packaged) model."""
    if classifier is True:
        classifier = load_classifier(config.routing.classifier_weights)
    state = Router(config, classifier or None, recorder or UsageRecorder(config.database))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await state.recorder.start()
        await state.pool.start()
        try:
            yield
        finally:
            await state.pool.stop()
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
    app.state.router = state

    # Until new_row, any check may refuse the request by raising ProxyError; where
    # that becomes the response (ProxyApp, or the FastAPI handler) it is counted
    # in offload_rejected_requests_total. From new_row on, Router.finish counts it
    # in offload_requests_total, also when no backend could answer (route "none").
    async def generate(request: Request, endpoint: str) -> Response:
        t0 = time.perf_counter()
        caller = state.admit(request)
        raw = await read_body(request, config.server)
        body = parse_json_object(raw, config.server)
        if endpoint == "chat":
            check_chat(body, config.server)
        else:
            check_completions(body)
        decision = state.decide(body, request, len(raw))
        _check_route_allowed(caller, decision)
        row = state.new_row(caller, endpoint, body, len(raw), decision)
        if state.store_text:
            row.prompt_text = raw.decode("utf-8", "replace")
        work = state.forwarder.forward(body, decision, row, _PATHS[endpoint], t0)
        return await _unless_disconnected(request, work, row, state, t0)

    @app.post("/v1/chat/completions", openapi_extra=openapi.CHAT)
    async def chat_completions(request: Request) -> Response:
        return await generate(request, "chat")

    @app.post("/v1/completions", openapi_extra=openapi.COMPLETIONS)
    async def completions(request: Request) -> Response:
        return await generate(request, "completions")

    @app.post("/v1/embeddings", openapi_extra=openapi.EMBEDDINGS)
    async def embeddings(request: Request) -> Response:
        t0 = time.perf_counter()
        caller = state.admit(request)
        raw = await read_body(request, config.server)
        body = parse_json_object(raw, config.server)
        check_embeddings(body)
        decision = state.policy.embeddings(request.headers)
        _check_route_allowed(caller, decision)
        row = state.new_row(caller, "embeddings", body, len(raw), decision)
        return await _unless_disconnected(
            request, state.forwarder.forward(body, decision, row, _PATHS["embeddings"], t0), row, state, t0
        )

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

    @app.post("/offload/route", openapi_extra=openapi.CHAT)
    async def route(request: Request) -> Response:
        """The decision for a request body; nothing is forwarded."""
        state.keys.caller(request.headers)
        raw = await read_body(request, config.server)
        body = parse_json_object(raw, config.server)
        if "messages" in body:
            check_chat(body, config.server)
        else:
            check_completions(body)
        decision = state.decide(body, request, len(raw))
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
        return _json({"ready": ready, "backends": backends}, status=200 if ready else 503)

    @app.get("/metrics")
    async def metrics() -> Response:
        return Response(state.metrics.render(), media_type=CONTENT_TYPE)

    @app.get("/offload/state")
    async def offload_state(request: Request) -> Response:
        """Admin: the pool's state (as in /readyz) and the config, secrets redacted."""
        state.keys.require_admin(request.headers)
        backends = {name: b.state() for name, b in state.pool.backends.items()}
        return _json({"backends": backends, "config": redacted_config(config)})

    _install_error_handlers(app, state.metrics)
    hot = {
        "/v1/chat/completions": chat_completions,
        "/v1/completions": completions,
        "/v1/embeddings": embeddings,
    }
    return ProxyApp(app, hot, state.metrics)


class ProxyApp:
    """FastAPI for everything, except that the three forwarding endpoints skip
    its middleware stack: same handlers, about a third less CPU per request
    (bench/README.md). The OpenAPI document still describes them.
    """

    def __init__(
        self, app: FastAPI, hot: dict[str, Callable[[Request], Awaitable[Response]]], metrics: Metrics
    ) -> None:
        self.app = app
        self.state = app.state
        self.hot = hot
        self.metrics = metrics

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
            response = exc.response()
        except Exception as exc:
            response = _internal_error(request, exc)
        await response(scope, receive, send)


# ---------------------------------------------------------------- helpers


_SECRET_NAMES = ("key", "secret", "password", "token")
_URL_PASSWORD = re.compile(r"(?<=://)([^/@:\s]*):[^/@\s]*@")


def redacted_config(config: Config) -> dict[str, Any]:
    """The config as JSON with every secret replaced by ``"<redacted>"``.

    Redacts by name (any string field whose name mentions key, secret,
    password or token, except the ``*_env`` fields that only name a variable)
    and any password in a URL, so that secrets added later stay hidden too.
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
        return _URL_PASSWORD.sub(r"\1:<redacted>@", value)
    return value


def _json(payload: Any, headers: dict[str, str] | None = None, status: int = 200) -> Response:
    return Response(orjson.dumps(payload), status_code=status, media_type="application/json", headers=headers)


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


async def _unless_disconnected(
    request: Request, work: Awaitable[Response], row: UsageRow, state: Router, t0: float
) -> Response:
    """Wait for the upstream's answer (or a stream's first bytes), cancelling the
    moment the client leaves; once a stream flows, RelayResponse watches instead.

    Cancelling closes the upstream connection, and vLLM aborts a request whose
    connection closed: the slot is free again at once.
    """

    def disconnected() -> Response:
        row.status, row.error_type = 499, "client_disconnected"
        row.tokens_estimated = True
        row.latency_ms = (time.perf_counter() - t0) * 1000
        state.finish(row)
        return Response(status_code=499)

    return await until_disconnect(request.receive, work, disconnected)


def _install_error_handlers(app: FastAPI, metrics: Metrics) -> None:
    @app.exception_handler(ProxyError)
    async def proxy_error(request: Request, exc: ProxyError) -> Response:
        metrics.rejected(exc)  # e.g. 401 on /v1/models, 403 on /offload/state, 400 on /offload/route
        return exc.response()

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            message = f"unknown path {request.url.path}"
        elif exc.status_code == 405:
            message = f"method {request.method} is not allowed on {request.url.path}"
        else:
            message = str(exc.detail)
        return ProxyError(exc.status_code, message, headers=dict(exc.headers or {})).response()

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        return ProxyError(400, "invalid request").response()

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        return _internal_error(request, exc)


def _internal_error(request: Request, exc: Exception) -> Response:
    # Log the type and place, never the request (it may carry keys or text).
    log.error("internal error on %s: %s", request.url.path, type(exc).__name__, exc_info=exc)
    return ProxyError(500, "internal error in offload-router", code="internal_error").response()


__all__ = ["create_app"]
