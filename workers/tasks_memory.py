"""Memory tasks: close a session into the archival memory; sweep idle sessions (beat)."""

from __future__ import annotations

import logging
import os
import threading
import uuid
from typing import Any

from celery import Task

from graphrag.errors import GraphDisabledError, GraphStoreError
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.memory.context import MemoryContext
from graphrag.memory.graph_io import MemoryGraphIO
from graphrag.memory.idle_sweep import queue_idle_closes
from graphrag.memory.models import MemoryOwner
from graphrag.memory.schema import ensure_memory_schema
from graphrag.memory.session_close import close_session as close_memory_session
from workers.celery_app import app
from workers.scope import graph_context, ingest_context

log = logging.getLogger(__name__)

_settings = app.conf.graphrag_settings
_memory = _settings.memory
_lock = threading.Lock()
_contexts: dict[int, MemoryContext] = {}


def _context() -> MemoryContext:
    """This process's memory context (schema ensured once); GraphDisabledError without Neo4j."""
    pid = os.getpid()
    with _lock:
        ctx = _contexts.get(pid)
        if ctx is None:
            ingest, graph = ingest_context(), graph_context()
            if not isinstance(ingest.graph, Neo4jGraphStore):
                raise GraphDisabledError("the archival memory needs Neo4j (NEO4J_ENABLE=true)")
            io = MemoryGraphIO(ingest.graph.driver, ingest.settings.neo4j)
            ensure_memory_schema(io, ingest.settings.embedding.dim)
            ctx = _contexts[pid] = MemoryContext(
                settings=ingest.settings.memory,
                extraction=ingest.settings.extraction,
                sessions=ingest.sessions,
                io=io,
                embedder=ingest.embedder,
                llm=graph.llm,
            )
        return ctx


def _countdown(retries: int) -> int:
    return int(
        min(_memory.close_retry_backoff_s * 2**retries, _settings.celery.retry_backoff_max_s)
    )


@app.task(
    name="memory.close_session",
    bind=True,
    acks_late=True,
    max_retries=_memory.close_max_retries,
    time_limit=_memory.close_time_limit_s,
    ignore_result=True,
)
def close_session(self: Task, tenant_id: str, owner: str, session_id: str) -> dict[str, Any]:
    """Turn what the session logged since its last close into facts; report what was done."""
    who = MemoryOwner(tenant_id=uuid.UUID(tenant_id), owner=owner)
    try:
        report = close_memory_session(_context(), who, uuid.UUID(session_id))
    except GraphStoreError as exc:
        raise self.retry(exc=exc, countdown=_countdown(self.request.retries)) from exc
    return report.model_dump(mode="json")


@app.task(name="memory.close_idle_sessions", acks_late=True, ignore_result=True)
def close_idle_sessions() -> int:
    """The periodic sweep (beat): queue the close of every session idle for `idle_close_s`."""
    if not _settings.neo4j.enable:
        log.info("idle memory sweep skipped: Neo4j is not enabled")
        return 0
    return queue_idle_closes(ingest_context().sessions, _memory)
