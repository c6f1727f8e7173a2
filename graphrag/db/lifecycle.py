"""The document status machine and its counters, each transition one guarded UPDATE.

pending -> processing -> finalizing -> completed, or failed / cancelled / deleting.
A transition names the attempt it belongs to, so the work of a superseded attempt changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

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


def hold_live(session: Session, kb_id: uuid.UUID, knowledge_id: uuid.UUID, attempt: int) -> bool:
    """Share-lock the document and its base (`kb_id`, the document's) while `attempt` is still
    being extracted into the graph; False when the attempt is no longer live (re-parsed,
    cancelled, deleted).

    Held across a graph write, the lock fences it: marking the document or its base deleted, or
    starting a new attempt, waits for the write to commit, and the purge that follows removes it.
    The base is locked first, in the order a base deletion takes them, so the two never deadlock.
    """
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
            Knowledge.kb_id == kb_id,
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
    also: Mapping[str, Any] | None = None,
    entity_keys: Sequence[str] = (),
) -> ParseStatus | None:
    """Settle one chunk's graph work for good and release the document's counter exactly once;
    the document's status after it, or None when this call settled nothing.

    The chunk's own status is the guard: only the first settlement of a `pending` chunk counts,
    so a task delivered twice decrements once. The decrement is clamped at zero, and the
    settlement that brings the counter to zero promotes the document to `completed`. `also`
    holds more column values for the same UPDATE of the document (what the task cost);
    `entity_keys`, the keys the chunk's graph named, go into the chunk's own UPDATE (a chunk row
    holds a vector: one row version a settlement, not two).
    """
    settled = session.execute(
        update(Chunk)
        .where(
            Chunk.id == chunk_id,
            Chunk.knowledge_id == knowledge_id,
            Chunk.attempt == attempt,
            Chunk.graph_status == GraphStatus.PENDING,
        )
        .values(graph_status=outcome, graph_error=error, entity_keys=list(entity_keys))
    )
    if not settled.rowcount:  # type: ignore[attr-defined]  # CursorResult of an UPDATE
        return None
    failed = 1 if outcome is GraphStatus.FAILED else 0
    remaining = func.greatest(Knowledge.pending_subtasks_count - 1, 0)
    status = session.execute(
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
            **(also or {}),
        )
        .returning(Knowledge.parse_status)
    ).scalar_one_or_none()
    return None if status is None else ParseStatus(status)
