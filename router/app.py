"""The ASGI app: the proxy's parts wired together, nothing more.

The request path, in one direction: ``router.edge.dispatch`` (ASGI entry) →
``router.edge.endpoints`` (auth, limits, intake, the decision from ``router.decide``) →
``router.forward.proxy`` (backends, streaming) → ``router.edge.state.ProxyState.finish``
(the row from ``router.ledger.rows``, metrics, the recorder). docs/architecture.md walks it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from router import console
from router.config import Config
from router.decide.policy import Classifier, load_classifier
from router.edge.dispatch import ProxyApp, install_error_handlers
from router.edge.endpoints import routes
from router.edge.state import ProxyState
from router.ledger.writer import UsageRecorder


def create_app(
    config: Config,
    *,
    classifier: Classifier | None | bool = True,
    recorder: UsageRecorder | None = None,
) -> ProxyApp:
    """The proxy app. ``classifier=True`` loads the configured (or packaged) model.

    Its parts are built here and started and stopped by the app's lifespan (an app driven
    without one, as by ``httpx.ASGITransport``, still answers: nothing is started).
    """
    if classifier is True:
        classifier = load_classifier(config.routing.classifier_weights)
    state = ProxyState(config, classifier or None, recorder or UsageRecorder(config.database))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await state.start()
        try:
            yield
        finally:
            await state.stop()

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
    table = routes(state)
    for route in table:
        app.add_api_route(
            route.path,
            route.endpoint,
            methods=list(route.methods),
            openapi_extra=route.openapi_extra,
            include_in_schema=route.include_in_schema,
        )
    app.include_router(console.router(state))  # the web console at /offload/console (admin key)
    install_error_handlers(app, state.metrics)
    return ProxyApp(app, {r.path: r.endpoint for r in table if r.hot}, state.metrics)


__all__ = ["create_app"]
