"""The OpenAI-compatible ASGI app (FastAPI) of the native backend: a frame that mounts routes.

Routes are registered specs (:class:`~openmind.core.specs.RouteSpec`, hook
``openmind_register_routes``); openmind-nlp registers ``GET /health`` (never needs the key),
``GET /v1/models``, ``POST /v1/chat/completions`` (streaming SSE and not), ``POST /v1/completions``
(echo + logprobs for log-likelihood evaluators) and ``POST /v1/embeddings``
(:mod:`openmind.nlp.serve.routes`); another domain or plugin adds its own endpoints the same way.
Errors use OpenAI's body ``{"error": {message, type, param, code}}``; clients never see a
traceback (it goes to the server log).

Example::

    from openmind.nlp.serve.app import create_app
    app = create_app(engine, ServeSettings(api_key="sk-local"))   # then: uvicorn.run(app, host="127.0.0.1")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import FastAPI

from openmind.nlp.serve.context import (
    MAX_BODY_BYTES,
    ApiError,
    ClientGone,
    ServeContext,
    ServeSettings,
    check_limits,
    create_guard,
    log,
)
from openmind.nlp.serve.engine import Engine
from openmind.nlp.serve.scheduler import Scheduler

if TYPE_CHECKING:
    from openmind.core.specs import RouteSpec

__all__ = [
    "MAX_BODY_BYTES",
    "ApiError",
    "ClientGone",
    "ServeContext",
    "ServeSettings",
    "check_limits",
    "create_app",
    "create_guard",
    "log",
    "mount_routes",
]


def mount_routes(app: FastAPI, routes: list[RouteSpec]) -> None:
    """Add each registered route's handler to ``app`` (in the registry's mount order). A handler
    that raises a non-API error becomes a 500 naming nothing but the server log."""
    from openmind.core.plugins import attributed

    for spec in routes:
        with attributed(spec.component):
            handler = spec.load()
        app.add_api_route(spec.path, handler, methods=list(spec.methods), name=spec.label())


def create_app(engine: Engine, settings: ServeSettings | None = None) -> FastAPI:
    """Build the ASGI app serving ``engine``. The scheduler starts with the app's lifespan."""
    from contextlib import asynccontextmanager

    from openmind.core.plugins import get_registry

    settings = settings or ServeSettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        scheduler = Scheduler(
            engine,
            max_batch_size=settings.max_batch_size,
            batch_wait_ms=settings.batch_wait_ms,
            max_queue=settings.max_queue,
            timeout=settings.request_timeout,
        )
        scheduler.start()
        app.state.scheduler = scheduler
        try:
            yield
        finally:
            await scheduler.stop()

    app = FastAPI(title="openmind", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.engine = engine
    app.state.settings = settings
    app.state.context = ServeContext(engine, settings)
    create_guard(app, settings)
    mount_routes(app, get_registry().routes())
    return app
