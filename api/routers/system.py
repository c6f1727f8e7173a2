"""Liveness and the status of every service."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Response
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest
from starlette.concurrency import run_in_threadpool

from api.auth import PUBLIC, requires
from api.deps import AppStateDep
from graphrag.auth.models import Capability
from graphrag.system_status import SystemStatus, collect_status

router = APIRouter(tags=["system"])


@router.get("/health", dependencies=[PUBLIC])
def health() -> dict[str, str]:
    """Liveness: the process answers (no key needed). Use /api/v1/system for the services."""
    return {"status": "ok"}


@router.get("/api/v1/system", response_model=SystemStatus, dependencies=[requires(Capability.READ)])
async def system(state: AppStateDep) -> SystemStatus:
    """Versions and health of PostgreSQL, Redis, the graph engine ("Neo4j" or "Not Enabled")
    and the LLM server (reachable, its model, the slots it reports, the background limit they
    give) and the leases of its slots in Redis (in flight, or stale: held with no call running);
    the live workers (from their heartbeats), the queues none consumes and the node names two
    processes share; the task outbox's backlog (unsent, in flight, failed); which parts of the
    agent memory work.

    Needs the `read` capability: service versions are of no use to anonymous callers.
    """
    return await run_in_threadpool(
        collect_status, state.settings, state.services.engine, state.redis, state.services.neo4j
    )


async def metrics(state: AppStateDep) -> Response:
    """Prometheus metrics of this API process and the queue depths (aggregates only)."""
    body = await run_in_threadpool(
        lambda: generate_latest(REGISTRY) + generate_latest(state.metrics)
    )
    return Response(body, media_type=CONTENT_TYPE_LATEST)


def add_metrics_route(app: FastAPI, public: bool) -> None:
    """`GET /metrics`: open to anyone when `public` (`api.metrics_public`), else for `read` keys."""
    access = PUBLIC if public else requires(Capability.READ)
    app.add_api_route("/metrics", metrics, dependencies=[access], include_in_schema=False)
