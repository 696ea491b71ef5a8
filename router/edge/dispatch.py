"""The ASGI entry point: the forwarding endpoints straight to their handler, the rest through
FastAPI, and every refusal and error rendered in one place, in the shape of the path's API."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from router.edge.access import log_refusal
from router.edge.endpoints import Handler
from router.edge.metrics import Metrics
from router.errors import ProxyError, shape_for_path

log = logging.getLogger("offload.app")


class ProxyApp:
    """FastAPI for everything, except that the forwarding endpoints skip its
    middleware stack: same handlers, about a third less CPU per request
    (bench/README.md). The OpenAPI document still describes them.
    """

    def __init__(self, app: FastAPI, hot: dict[str, Handler], metrics: Metrics) -> None:
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
            response = refusal(exc, scope["path"], self.metrics)
        except Exception as exc:
            response = internal_error(request, exc)
        await response(scope, receive, send)


def refusal(exc: ProxyError, path: str, metrics: Metrics) -> Response:
    """A request the proxy refused itself (auth, limits, intake, admin), counted in
    ``offload_rejected_requests_total`` and answered in the path's API's shape."""
    metrics.rejected(exc)
    log_refusal(path, exc)
    return exc.response(shape=shape_for_path(path))


def install_error_handlers(app: FastAPI, metrics: Metrics) -> None:
    @app.exception_handler(ProxyError)
    async def proxy_error(request: Request, exc: ProxyError) -> Response:
        return refusal(exc, request.url.path, metrics)  # e.g. 401 on /v1/models, 403 on /offload/state

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
        return internal_error(request, exc)


def internal_error(request: Request, exc: Exception) -> Response:
    # Log the type and place, never the request (it may carry keys or text).
    log.error("internal error on %s: %s", request.url.path, type(exc).__name__, exc_info=exc)
    error = ProxyError(500, "internal error in offload-router", code="internal_error")
    return error.response(shape=shape_for_path(request.url.path))
