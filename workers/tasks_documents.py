"""Document tasks: thin wrappers that parse ids and call one core function."""

from __future__ import annotations

import uuid
from contextlib import suppress
from typing import Any

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded

from graphrag.db.outbox import TaskLease, TaskName
from graphrag.ingest.processing import fail_document, process_document
from graphrag.ingest.purge import purge_document, purge_knowledge_base
from graphrag.ingest.reconcile import reconcile
from workers.celery_app import app
from workers.memory_ceiling import OVER_CEILING, MemoryCeilingError
from workers.scope import process_scope

_settings = app.conf.graphrag_settings
_celery = _settings.celery
_SOFT_LIMIT_S = _celery.docparse_time_limit_s - _celery.docparse_soft_limit_margin_s


class _ProcessTask(Task):
    """A crash of the processing (a bug, a time limit, the memory ceiling) ends the document
    `failed`, not stuck."""

    def on_failure(self, exc: Exception, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        knowledge_id, attempt = args
        reason = None
        if isinstance(exc, SoftTimeLimitExceeded):
            reason = f"processing took longer than its time limit ({_SOFT_LIMIT_S} s)"
        elif isinstance(exc, MemoryCeilingError):
            reason = OVER_CEILING
        fail_document(process_scope().ingest(), uuid.UUID(knowledge_id), attempt, exc, reason)


@app.task(
    name="document.process",
    base=_ProcessTask,
    acks_late=True,
    time_limit=_celery.docparse_time_limit_s,
    soft_time_limit=_SOFT_LIMIT_S,
    ignore_result=True,
)
def process(knowledge_id: str, attempt: int) -> str:
    """Parse, chunk, embed and index one attempt of a document.

    Past the soft time limit or the memory ceiling the document is failed with the reason
    (`on_failure`); a hard kill leaves it to the poison count of the next delivery and to the
    reconciler.
    """
    with suppress(MemoryError):
        lease = TaskLease(TaskName.PROCESS_DOCUMENT, (knowledge_id, attempt))
        ctx = process_scope().ingest()
        return process_document(ctx, uuid.UUID(knowledge_id), attempt, lease).value
    # Raised once the MemoryError is gone, and with it the frames that held the failed parse.
    raise MemoryCeilingError(OVER_CEILING)


@app.task(name="document.delete", acks_late=True, ignore_result=True)
def delete(knowledge_id: str) -> bool:
    lease = TaskLease(TaskName.DELETE_DOCUMENT, (knowledge_id,))
    return purge_document(process_scope().ingest(), uuid.UUID(knowledge_id), lease)


@app.task(name="document.delete_kb", acks_late=True, ignore_result=True)
def delete_kb(kb_id: str) -> bool:
    lease = TaskLease(TaskName.DELETE_KNOWLEDGE_BASE, (kb_id,))
    return purge_knowledge_base(process_scope().ingest(), uuid.UUID(kb_id), lease)


@app.task(name="document.reconcile", acks_late=True, ignore_result=True)
def reconcile_stuck() -> int:
    """The periodic sweep (beat): re-enqueue documents stuck past the configured timeout."""
    report = reconcile(process_scope().ingest())
    return len(report.reprocessed) + len(report.re_extracted) + len(report.purged_documents)
