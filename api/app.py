"""The FastAPI application factory."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis
from fastapi import FastAPI
from prometheus_client import CollectorRegistry
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route

from api.auth import assert_routes_guarded
from api.chat_gate import ChatGate
from api.console_files import mount_console
from api.errors import install_error_handlers
from api.mcp_http import MCP_PATH, McpHttp
from api.request_guard import RequestGuard
from api.routers import (
    admin_keys,
    chat,
    documents,
    entity_resolution,
    evaluation,
    graph_search,
    identity,
    initialization,
    interactions,
    knowledge_bases,
    memory,
    openai_compat,
    search,
    system,
)
from api.state import AppState
from graphrag.auth.rate_limit import FailedAuthLimiter, RateLimiter
from graphrag.ingest.url.gate import UrlImportGate
from graphrag.metrics import QueueDepthCollector
from graphrag.services import Role, open_services
from graphrag.settings import Settings, get_settings
from workers.queue import sender_queue

__all__ = ["create_app"]

log = logging.getLogger(__name__)


# One router per resource, in the order their routes are matched and documented.
_RESOURCES = (
    knowledge_bases,
    documents,
    chat,
    graph_search,
    entity_resolution,
    search,
    initialization,
    admin_keys,
    memory,
    interactions,
    evaluation,
    identity,
    openai_compat,
)


def _open_state(settings: Settings) -> AppState:
    services = open_services(settings, Role.API, sender_queue(settings))
    if services.neo4j is None:
        log.info("knowledge graph not enabled (NEO4J_ENABLE is not 'true')")
    return AppState(
        services=services,
        rate_limiter=RateLimiter(services.redis, settings.api),
        failed_auth=FailedAuthLimiter(services.redis, settings.auth),
        metrics=_scrape_registry(settings, services.redis),
        url_imports=UrlImportGate(settings.ingest),
        chat_gate=ChatGate(settings.chat),
    )


def _scrape_registry(settings: Settings, client: redis.Redis[bytes]) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(QueueDepthCollector(client, settings.celery.queues))
    return registry


def _close_state(state: AppState) -> None:
    state.url_imports.close()
    state.services.close()


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; services are opened by the lifespan, once per process."""
    settings = settings or get_settings()

    mcp_http = McpHttp(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state = await run_in_threadpool(_open_state, settings)
        app.state.graphrag = state
        try:
            async with mcp_http.running():
                yield
        finally:
            await run_in_threadpool(_close_state, state)

    app = FastAPI(
        title="graphrag",
        version=settings.version,
        summary="Local-first GraphRAG backend: documents, knowledge graph, chat, agent memory.",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    # Outermost of our middleware: no body is read past its cap, whichever route it is for.
    app.add_middleware(RequestGuard, settings=settings)
    app.include_router(system.router)
    system.add_metrics_route(app, settings.api.metrics_public)
    for resource in _RESOURCES:
        app.include_router(resource.router)
    # The MCP route checks the API key itself, before the SDK (see api/mcp_http.py).
    app.router.routes.append(Route(MCP_PATH, endpoint=mcp_http, include_in_schema=False))
    mount_console(app)
    assert_routes_guarded(app)
    return app
