"""The core functions of the outbox tasks, called as their worker wrappers call them: with the
task's lease on its outbox row (built from the request the producers write)."""

from __future__ import annotations

import uuid

from graphrag.db import outbox
from graphrag.db.outbox import TaskLease
from graphrag.ingest import processing, purge
from graphrag.ingest.context import IngestContext
from graphrag.memory import session_close
from graphrag.memory.context import MemoryContext
from graphrag.memory.records import MemoryOwner, SessionCloseReport

__all__ = ["close_session", "process_document", "purge_document", "purge_knowledge_base"]


def process_document(
    ctx: IngestContext, knowledge_id: uuid.UUID, attempt: int
) -> processing.ProcessOutcome:
    lease = TaskLease.of(outbox.process_document(knowledge_id, attempt))
    return processing.process_document(ctx, knowledge_id, attempt, lease)


def purge_document(ctx: IngestContext, knowledge_id: uuid.UUID) -> bool:
    lease = TaskLease.of(outbox.delete_document(knowledge_id))
    return purge.purge_document(ctx, knowledge_id, lease)


def purge_knowledge_base(ctx: IngestContext, kb_id: uuid.UUID) -> bool:
    lease = TaskLease.of(outbox.delete_knowledge_base(kb_id))
    return purge.purge_knowledge_base(ctx, kb_id, lease)


def close_session(
    ctx: MemoryContext, owner: MemoryOwner, session_id: uuid.UUID
) -> SessionCloseReport:
    request = outbox.close_memory_session(owner.tenant_id, owner.owner, session_id)
    return session_close.close_session(ctx, owner, session_id, TaskLease.of(request))
