"""Graph tasks on the `graph` queue: one extraction per chunk, retried with backoff; one entity
resolution per completed document."""

from __future__ import annotations

import uuid
from contextlib import suppress
from dataclasses import asdict
from typing import Any

import redis
from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from kombu.exceptions import OperationalError

from graphrag.db.enums import GraphStatus
from graphrag.db.outbox import TaskLease, TaskName
from graphrag.errors import GraphStoreError
from graphrag.ingest.graph.chunk_extraction import (
    RETRYABLE,
    GraphContext,
    extract_chunk_graph,
    fail_chunk,
    time_limit_reason,
)
from graphrag.ingest.graph.entity_resolution import resolve_document_entities
from workers.celery_app import app
from workers.memory_ceiling import OVER_CEILING
from workers.scope import process_scope

_settings = app.conf.graphrag_settings
_celery = _settings.celery
_resolution = _settings.resolution
_OVER_TIME = time_limit_reason(_settings)

BROKER_ERRORS = (redis.RedisError, OperationalError)


def _work(
    knowledge_id: str, attempt: int, chunk_id: str
) -> tuple[GraphContext, uuid.UUID, int, uuid.UUID, TaskLease]:
    """The core function's arguments: the process's graph context, the parsed ids and the
    task's lease on its outbox row (from the arguments as sent)."""
    lease = TaskLease(TaskName.EXTRACT_CHUNK, (knowledge_id, attempt, chunk_id))
    ctx = process_scope().graph_context()
    return ctx, uuid.UUID(knowledge_id), attempt, uuid.UUID(chunk_id), lease


class _ExtractTask(Task):
    """An unexpected crash (a bug) still settles the chunk, so the document reaches an end."""

    def on_failure(self, exc: Exception, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        if isinstance(exc, BROKER_ERRORS):
            # The broker (also the LLM slot store) went away mid-task: not the chunk's fault. The
            # chunk stays pending and the outbox sends its task again once the broker is back.
            return
        knowledge_id, attempt, chunk_id = args
        reason = f"internal error ({type(exc).__name__})"
        fail_chunk(*_work(knowledge_id, attempt, chunk_id), reason=reason)


@app.task(
    name="graph.extract_chunk",
    base=_ExtractTask,
    bind=True,
    acks_late=True,
    # Celery's own exponential backoff, capped: a Neo4j restart or a busy LLM gets time to come
    # back. The last try settles the chunk instead of raising, so it is never retried again.
    autoretry_for=RETRYABLE,
    retry_backoff=_celery.graph_retry_backoff_s,
    retry_backoff_max=_celery.retry_backoff_max_s,
    retry_jitter=False,
    max_retries=_celery.graph_max_retries,
    time_limit=_celery.graph_time_limit_s,
    soft_time_limit=_celery.graph_soft_limit_s,
    ignore_result=True,
)
def extract_chunk(self: Task, knowledge_id: str, attempt: int, chunk_id: str) -> str:
    """Extract one chunk's entities and relations; the last try settles the chunk as failed."""
    final = self.request.retries >= self.max_retries
    args = _work(knowledge_id, attempt, chunk_id)
    try:
        with suppress(MemoryError):
            return extract_chunk_graph(*args, final_try=final).value
    except SoftTimeLimitExceeded:
        fail_chunk(*args, reason=_OVER_TIME)
        return GraphStatus.FAILED.value
    # Settled here: Celery stops the whole worker on a MemoryError out of a task.
    fail_chunk(*args, reason=OVER_CEILING)
    return GraphStatus.FAILED.value


@app.task(
    name=TaskName.RESOLVE_ENTITIES.value,
    acks_late=True,
    # Neo4j unreachable: Celery's exponential backoff, capped; the LLM's faults are not retried
    # (an unanswered pair stays apart).
    autoretry_for=(GraphStoreError,),
    retry_backoff=_resolution.retry_backoff_s,
    retry_backoff_max=_celery.retry_backoff_max_s,
    retry_jitter=False,
    max_retries=_resolution.max_retries,
    time_limit=_resolution.task_time_limit_s,
    ignore_result=True,
)
def resolve_entities(knowledge_id: str) -> dict[str, int] | None:
    """Resolve a completed document's entities against its base; what the run did."""
    lease = TaskLease(TaskName.RESOLVE_ENTITIES, (knowledge_id,))
    ctx = process_scope().graph_context()
    report = resolve_document_entities(ctx, uuid.UUID(knowledge_id), lease)
    return None if report is None else asdict(report)
