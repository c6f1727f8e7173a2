"""The document status machine and its counters, each transition one guarded UPDATE.

pending -> processing -> finalizing -> completed, or failed / cancelled / deleting.
A transition names the attempt it belongs to, so the work of a superseded attempt changes nothing.
"""

from __future__ import annotations

import uuid

from sqlalchemy import case, func, literal, select, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session

from graphrag.db.enums import GraphStatus, KnowledgeBaseStatus, ParseStatus, Stage, StageStatus
from graphrag.db.models import Chunk, Knowledge, KnowledgeBase

__all__ = [
    "finish_chunk_subtask",
    "hold_live",
    "lock_current",
    "mark_failed",
    "set_stage",
]


def lock_current(
    session: Session, knowledge_id: uuid.UUID, attempt: int, allowed: frozenset[ParseStatus]
) -> Knowledge | None:
    """The document row, locked, if `attempt` is still its attempt and its status is allowed."""
    doc = session.execute(
        select(Knowledge).where(Knowledge.id == knowledge_id).with_for_update()
    ).scalar_one_or_none()
    if doc is None or doc.attempt != attempt or doc.parse_status not in allowed:
        return None
    return doc


def hold_live(session: Session, knowledge_id: uuid.UUID, attempt: int) -> bool:
    """Share-lock the document and its base while `attempt` is still being extracted into the
    graph; False when the attempt is no longer live (re-parsed, cancelled, deleted).

    Held across a graph write, the lock fences it: marking the document or its base deleted, or
    starting a new attempt, waits for the write to commit, and the purge that follows removes it.
    The base is locked first, in the order a base deletion takes them, so the two never deadlock.
    """
    kb_id = session.execute(
        select(Knowledge.kb_id).where(Knowledge.id == knowledge_id)
    ).scalar_one_or_none()
    if kb_id is None:
        return False
    kb = session.execute(
        select(KnowledgeBase.id)
        .where(KnowledgeBase.id == kb_id, KnowledgeBase.status == KnowledgeBaseStatus.ACTIVE)
        .with_for_update(read=True)
    ).scalar_one_or_none()
    if kb is None:
        return False
    doc = session.execute(
        select(Knowledge.id)
        .where(
            Knowledge.id == knowledge_id,
            Knowledge.attempt == attempt,
            Knowledge.parse_status == ParseStatus.FINALIZING,
        )
        .with_for_update(read=True)
    ).scalar_one_or_none()
    return doc is not None


def set_stage(
    session: Session,
    knowledge_id: uuid.UUID,
    attempt: int,
    stage: Stage,
    status: StageStatus,
    **counts: int | float,
) -> bool:
    """Record one stage's status and counts (done, total, seconds); False when the attempt is
    no longer current (stop working)."""
    progress = {"status": str(status), **counts}
    result = session.execute(
        update(Knowledge)
        .where(
            Knowledge.id == knowledge_id,
            Knowledge.attempt == attempt,
            Knowledge.parse_status.in_(ParseStatus.working()),
        )
        .values(progress=Knowledge.progress.op("||")(literal({str(stage): progress}, JSONB)))
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]  # CursorResult of an UPDATE


def mark_failed(session: Session, knowledge_id: uuid.UUID, attempt: int, reason: str) -> bool:
    """End the attempt as `failed` with a readable reason, unless it was superseded meanwhile."""
    result = session.execute(
        update(Knowledge)
        .where(
            Knowledge.id == knowledge_id,
            Knowledge.attempt == attempt,
            Knowledge.parse_status.in_(ParseStatus.working()),
        )
        .values(
            parse_status=ParseStatus.FAILED,
            error=reason,
            pending_subtasks_count=0,
            status_changed_at=func.now(),
        )
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]  # CursorResult of an UPDATE


def finish_chunk_subtask(
    session: Session,
    knowledge_id: uuid.UUID,
    attempt: int,
    chunk_id: uuid.UUID,
    outcome: GraphStatus,
    error: str | None = None,
) -> bool:
    """Settle one chunk's graph work for good and release the document's counter exactly once.

    The chunk's own status is the guard: only the first settlement of a `pending` chunk counts,
    so a task delivered twice decrements once. The decrement is clamped at zero, and the
    settlement that brings the counter to zero promotes the document to `completed`.
    """
    settled = session.execute(
        update(Chunk)
        .where(
            Chunk.id == chunk_id,
            Chunk.knowledge_id == knowledge_id,
            Chunk.attempt == attempt,
            Chunk.graph_status == GraphStatus.PENDING,
        )
        .values(graph_status=outcome, graph_error=error)
    )
    if not settled.rowcount:  # type: ignore[attr-defined]  # CursorResult of an UPDATE
        return False
    failed = 1 if outcome is GraphStatus.FAILED else 0
    remaining = func.greatest(Knowledge.pending_subtasks_count - 1, 0)
    session.execute(
        update(Knowledge)
        .where(Knowledge.id == knowledge_id, Knowledge.attempt == attempt)
        .values(
            pending_subtasks_count=remaining,
            failed_chunk_count=Knowledge.failed_chunk_count + failed,
            parse_status=case(
                (
                    (Knowledge.parse_status == ParseStatus.FINALIZING) & (remaining == 0),
                    ParseStatus.COMPLETED,
                ),
                else_=Knowledge.parse_status,
            ),
            status_changed_at=func.now(),
        )
    )
    return True
