"""Memory tasks: close a session into the archival memory; sweep idle sessions (beat)."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from graphrag.db.outbox import TaskLease, TaskName
from graphrag.errors import GraphStoreError
from graphrag.memory.idle_sweep import queue_idle_closes
from graphrag.memory.records import MemoryOwner
from graphrag.memory.session_close import close_session as close_memory_session
from workers.celery_app import app
from workers.scope import process_scope

log = logging.getLogger(__name__)

_settings = app.conf.graphrag_settings
_memory = _settings.memory


@app.task(
    name="memory.close_session",
    acks_late=True,
    # Neo4j unreachable: Celery's exponential backoff (backoff * 2^n s), capped.
    autoretry_for=(GraphStoreError,),
    retry_backoff=_memory.close_retry_backoff_s,
    retry_backoff_max=_settings.celery.retry_backoff_max_s,
    retry_jitter=False,
    max_retries=_memory.close_max_retries,
    time_limit=_memory.close_time_limit_s,
    ignore_result=True,
)
def close_session(tenant_id: str, owner: str, session_id: str) -> dict[str, Any]:
    """Turn what the session logged since its last close into facts; report what was done."""
    who = MemoryOwner(tenant_id=uuid.UUID(tenant_id), owner=owner)
    lease = TaskLease(TaskName.CLOSE_MEMORY_SESSION, (tenant_id, owner, session_id))
    report = close_memory_session(process_scope().memory(), who, uuid.UUID(session_id), lease)
    return report.model_dump(mode="json")


@app.task(name="memory.close_idle_sessions", acks_late=True, ignore_result=True)
def close_idle_sessions() -> int:
    """The periodic sweep (beat): queue the close of every session idle for `idle_close_s`."""
    if not _settings.neo4j.enable:
        log.info("idle memory sweep skipped: Neo4j is not enabled")
        return 0
    return queue_idle_closes(process_scope().sessions, _memory)
