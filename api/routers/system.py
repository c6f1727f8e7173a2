"""Liveness and the status of every service."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from api.deps import AppStateDep
from graphrag.system_status import SystemStatus, collect_status

router = APIRouter(tags=["system"])


@router.get("/health")
def health() -> dict[str, str]:
    """Liveness: the process answers. Use /api/v1/system for the services."""
    return {"status": "ok"}


@router.get("/api/v1/system", response_model=SystemStatus)
async def system(state: AppStateDep) -> SystemStatus:
    """Versions and health of PostgreSQL, Redis and the graph engine ("Neo4j" or "Not Enabled")."""
    return await run_in_threadpool(
        collect_status, state.settings, state.engine, state.redis, state.neo4j
    )
