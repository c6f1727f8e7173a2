"""Helpers for the agent-memory tests: a movable clock, owners of their own, read-back queries."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from neo4j import Driver
from sqlalchemy import delete
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.models import ChatSession, CoreMemory, RecallMemory
from graphrag.llm.client import LlmClient
from graphrag.memory.clock import Clock
from graphrag.memory.context import MemoryContext
from graphrag.memory.graph_io import MemoryGraphIO
from graphrag.memory.graph_schema import ensure_memory_schema
from graphrag.memory.records import MemoryOwner
from graphrag.search.embeddings import Embedder, build_embedder
from graphrag.settings import EmbeddingSettings, Settings
from graphrag.tenancy import ensure_tenant

__all__ = [
    "DAY_MS",
    "ManualClock",
    "fact_rows",
    "memory_context",
    "mentions",
    "new_chat_session",
    "owned_memory",
]

DAY_MS = 86_400_000
START_MS = 1_800_000_000_000  # a fixed epoch-ms instant (2027): tests never read the wall clock


class ManualClock:
    """A clock that only moves when told to."""

    def __init__(self, now_ms: int = START_MS) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms

    def advance(self, *, days: float = 0, seconds: float = 0) -> None:
        self.now_ms += int(days * DAY_MS + seconds * 1000)


@cache
def _embedder(settings: EmbeddingSettings) -> Embedder:
    return build_embedder(settings)


def memory_context(
    settings: Settings,
    sessions: sessionmaker[Session],
    driver: Driver,
    *,
    clock: Clock,
    llm: LlmClient | None = None,
    **memory_changes: Any,
) -> MemoryContext:
    """The memory over the test services (schema ensured), with `memory_changes` to settings."""
    io = MemoryGraphIO(driver, settings.neo4j)
    ensure_memory_schema(io, settings.embedding.dim)
    return MemoryContext(
        settings=settings.memory.model_copy(update=memory_changes),
        extraction=settings.extraction,
        sessions=sessions,
        io=io,
        embedder=_embedder(settings.embedding),
        llm=llm,
        clock=clock,
    )


def new_chat_session(sessions: sessionmaker[Session], owner: MemoryOwner) -> uuid.UUID:
    """A chat session row of the owner (recall rows point at one)."""
    session_id = uuid.uuid4()
    with session_scope(sessions) as db:
        db.add(ChatSession(id=session_id, tenant_id=owner.tenant_id, owner=owner.owner))
    return session_id


def _forget(sessions: sessionmaker[Session], driver: Driver, owner: MemoryOwner) -> None:
    params = {"tenant": str(owner.tenant_id), "owner": owner.owner}
    driver.execute_query(
        "MATCH (n) WHERE (n:Memory OR n:MemoryEntity) AND n.tenant = $tenant AND n.owner = $owner "
        "DETACH DELETE n",
        params,
    )
    with session_scope(sessions) as db:
        for table in (RecallMemory, CoreMemory, ChatSession):
            db.execute(
                delete(table).where(table.tenant_id == owner.tenant_id, table.owner == owner.owner)
            )


@contextmanager
def owned_memory(
    settings: Settings, sessions: sessionmaker[Session], driver: Driver, tenant: str | None = None
) -> Iterator[MemoryOwner]:
    """An owner no other test uses, in `tenant` (the default one); all its data removed after."""
    with session_scope(sessions) as db:
        tenant_id = ensure_tenant(db, tenant or settings.api.default_tenant)
    owner = MemoryOwner(tenant_id=tenant_id, owner=f"memtest-{uuid.uuid4().hex[:12]}")
    try:
        yield owner
    finally:
        _forget(sessions, driver, owner)


def fact_rows(driver: Driver, owner: MemoryOwner) -> dict[str, dict[str, Any]]:
    """The owner's facts keyed by id: text, kind, counters and times."""
    records, _, _ = driver.execute_query(
        "MATCH (m:Memory {tenant: $tenant, owner: $owner}) "
        "RETURN m.id AS id, m.text AS text, m.kind AS kind, m.access_count AS access_count, "
        "m.last_access AS last_access, m.created_at AS created_at, m.session_id AS session_id",
        {"tenant": str(owner.tenant_id), "owner": owner.owner},
    )
    return {r["id"]: dict(r) for r in records}


def mentions(driver: Driver, owner: MemoryOwner) -> set[tuple[str, str]]:
    """(fact id, entity name) of every MENTIONS edge of the owner."""
    records, _, _ = driver.execute_query(
        "MATCH (m:Memory {tenant: $tenant, owner: $owner})-[:MENTIONS]->(e:MemoryEntity) "
        "RETURN m.id AS id, e.name AS name",
        {"tenant": str(owner.tenant_id), "owner": owner.owner},
    )
    return {(r["id"], r["name"]) for r in records}
