"""Health of every service the backend depends on, read with real requests."""

from __future__ import annotations

import logging
from typing import Literal

import redis
from neo4j import Driver
from neo4j.exceptions import Neo4jError, ServiceUnavailable
from pydantic import BaseModel
from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from graphrag.db.outbox import OutboxBacklog, outbox_backlog
from graphrag.graph.neo4j_client import neo4j_version
from graphrag.llm.concurrency import (
    SlotLeases,
    background_policy,
    background_slots_key,
    interactive_policy,
    interactive_slots_key,
    read_leases,
)
from graphrag.llm.server_info import read_server_info, slot_limit
from graphrag.settings import Settings
from graphrag.worker_liveness import WorkerLiveness, read_workers

__all__ = [
    "LlmStatus",
    "MemoryStatus",
    "ServiceHealth",
    "SlotLeasesStatus",
    "SystemStatus",
    "collect_status",
    "graph_engine_name",
]

log = logging.getLogger(__name__)

GRAPH_ENGINE_ON = "Neo4j"
GRAPH_ENGINE_OFF = "Not Enabled"


class ServiceHealth(BaseModel):
    status: Literal["ok", "down", "disabled"]
    version: str | None = None
    detail: str | None = None


class SlotLeasesStatus(BaseModel):
    """The leases of the LLM slots in Redis, per kind; None when Redis cannot be read."""

    background: SlotLeases | None
    interactive: SlotLeases | None


class LlmStatus(BaseModel):
    """The LLM server: its model, the slots it reports, and the background limit they give;
    the slot leases held in Redis (in flight, or stale: held with no call in flight)."""

    status: Literal["ok", "down"]
    base_url: str
    model: str
    total_slots: int | None = None
    slot_limit: int
    detail: str | None = None
    slot_leases: SlotLeasesStatus | None = None


class MemoryStatus(BaseModel):
    """The agent memory's parts: core and recall live in PostgreSQL, archival facts in Neo4j."""

    core: Literal["enabled"] = "enabled"
    recall: Literal["enabled"] = "enabled"
    archival: Literal["enabled", "disabled"]


class SystemStatus(BaseModel):
    version: str
    graph_database_engine: str
    database: ServiceHealth
    redis: ServiceHealth
    graph: ServiceHealth
    outbox: OutboxBacklog | None  # background tasks not yet settled; None when the database is down
    llm: LlmStatus
    workers: WorkerLiveness
    memory: MemoryStatus


def graph_engine_name(settings: Settings) -> str:
    """What the seed's GET /system reports: "Neo4j" when the graph is on, else "Not Enabled"."""
    return GRAPH_ENGINE_ON if settings.neo4j.enable else GRAPH_ENGINE_OFF


def _database(engine: Engine) -> ServiceHealth:
    try:
        with engine.connect() as conn:
            version = conn.execute(text("SHOW server_version")).scalar_one()
            vector = conn.execute(
                text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            ).scalar_one_or_none()
    except SQLAlchemyError as exc:
        return ServiceHealth(status="down", detail=str(exc).splitlines()[0])
    pgvector = vector or "absent"
    return ServiceHealth(status="ok", version=f"PostgreSQL {version}; pgvector {pgvector}")


def _redis(client: redis.Redis[bytes]) -> ServiceHealth:
    try:
        info = client.info("server")
    except redis.RedisError as exc:
        return ServiceHealth(status="down", detail=str(exc))
    return ServiceHealth(status="ok", version=f"Redis {info.get('redis_version', '?')}")


def _graph(driver: Driver | None, settings: Settings) -> ServiceHealth:
    if not settings.neo4j.enable:
        return ServiceHealth(status="disabled")
    if driver is None:
        return ServiceHealth(status="down", detail="no driver")
    try:
        return ServiceHealth(
            status="ok", version=f"Neo4j {neo4j_version(driver, settings.neo4j.database)}"
        )
    except (Neo4jError, ServiceUnavailable, OSError) as exc:
        return ServiceHealth(status="down", detail=str(exc))


def _outbox(engine: Engine) -> OutboxBacklog | None:
    try:
        with Session(engine) as session:
            return outbox_backlog(session)
    except SQLAlchemyError:
        return None


def _llm(settings: Settings, redis_client: redis.Redis[bytes]) -> LlmStatus:
    info = read_server_info(settings.llm)
    limit = slot_limit(settings.llm, info)
    return LlmStatus(
        status="ok" if info.reachable else "down",
        base_url=info.base_url,
        model=info.model,
        total_slots=info.total_slots,
        slot_limit=limit,
        detail=info.detail,
        slot_leases=_slot_leases(settings, redis_client, limit),
    )


def _slot_leases(
    settings: Settings, client: redis.Redis[bytes], background_limit: int
) -> SlotLeasesStatus:
    llm = settings.llm
    kinds = {
        "background": (background_slots_key(llm), background_limit, background_policy(llm)),
        "interactive": (interactive_slots_key(llm), llm.interactive_limit, interactive_policy(llm)),
    }
    found: dict[str, SlotLeases | None] = {}
    for kind, (key, limit, policy) in kinds.items():
        try:
            found[kind] = read_leases(client, key, limit, policy)
        except redis.RedisError as exc:
            log.info("LLM slot leases of %s not read: %s", key, exc)
            found[kind] = None
    return SlotLeasesStatus(**found)


def collect_status(
    settings: Settings, engine: Engine, redis_client: redis.Redis[bytes], driver: Driver | None
) -> SystemStatus:
    """Ask each service for its version, read the workers' heartbeats; a failing service is
    reported down, never raised."""
    return SystemStatus(
        version=settings.version,
        graph_database_engine=graph_engine_name(settings),
        database=_database(engine),
        redis=_redis(redis_client),
        graph=_graph(driver, settings),
        outbox=_outbox(engine),
        llm=_llm(settings, redis_client),
        workers=read_workers(redis_client, settings.celery, _queues(settings)),
        memory=MemoryStatus(archival="enabled" if settings.neo4j.enable else "disabled"),
    )


def _queues(settings: Settings) -> list[str]:
    return settings.celery.queues
