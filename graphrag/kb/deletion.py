"""How far the deletion of a knowledge base has gone, for the caller who asked for it.

A base being deleted is hidden from every read, but its purge can take a while on a large base
and can fail (the worker lost, a statement timed out): the caller can see what is left, how many
times the purge ran, and the last error, until the base is gone (then: not found).
"""

from __future__ import annotations

import uuid

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from graphrag.db.enums import KnowledgeBaseStatus, OutboxStatus
from graphrag.db.models import Chunk, Knowledge, KnowledgeBase, OutboxTask
from graphrag.db.outbox import delete_knowledge_base
from graphrag.db.tenant_rows import tenant_row

__all__ = ["KbDeletionPublic", "kb_deletion"]


class KbDeletionPublic(BaseModel):
    """A base still being deleted: what is left of it and how its purge task fares."""

    id: uuid.UUID
    status: KnowledgeBaseStatus
    documents_left: int
    chunks_left: int
    purge_runs: int  # times the purge task was sent to a worker
    purge_failures: int  # runs that ended in an error or were lost (each is sent again)
    given_up: bool  # past the re-send cap: the periodic sweep sends it again
    last_error: str | None


def kb_deletion(session: Session, tenant_id: uuid.UUID, kb_id: uuid.UUID) -> KbDeletionPublic:
    """The deletion under way of this tenant's base; `NotFoundError` when no such base is being
    deleted (it is gone, was never there, or is not being deleted)."""
    kb = tenant_row(
        session,
        KnowledgeBase,
        tenant_id,
        kb_id,
        what="knowledge base being deleted",
        id_key="kb_id",
        where=[KnowledgeBase.status == KnowledgeBaseStatus.DELETING],
    )
    documents = session.scalar(select(func.count()).where(Knowledge.kb_id == kb.id)) or 0
    chunks = session.scalar(select(func.count()).where(Chunk.kb_id == kb.id)) or 0
    tasks = session.execute(
        select(OutboxTask.status, OutboxTask.sends, OutboxTask.resends, OutboxTask.last_error)
        .where(OutboxTask.dedup_key == delete_knowledge_base(kb.id).dedup_key)
        .order_by(OutboxTask.id.desc())
    ).all()
    # A row given up stays as it was; the sweep then writes a new one: count them all.
    errors = [task.last_error for task in tasks if task.last_error]
    return KbDeletionPublic(
        id=kb.id,
        status=kb.status,
        documents_left=documents,
        chunks_left=chunks,
        purge_runs=sum(task.sends for task in tasks),
        purge_failures=sum(task.resends for task in tasks),
        given_up=bool(tasks) and tasks[0].status == OutboxStatus.FAILED,
        last_error=errors[0] if errors else None,
    )
