"""The document status machine and its counters, each transition one guarded UPDATE.

pending -> processing -> finalizing -> completed, or failed / cancelled / deleting.
A transition names the attempt it belongs to, so the work of a superseded attempt changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import Integer, bindparam, case, exists, func, select, update
from sqlalchemy.orm import Session

from graphrag.db.accounting import COST_INCREMENTS, ChunkCost, cost_params
from graphrag.db.enums import GraphStatus, KnowledgeBaseStatus, ParseStatus, Stage, StageStatus
from graphrag.db.models import Chunk, Knowledge, KnowledgeBase, core_table

__all__ = [
    "finish_chunk_subtask",
    "hold_live",
    "mark_failed",
    "set_stage",
]


_KNOWLEDGE, _CHUNK = core_table(Knowledge), core_table(Chunk)
_BASES = core_table(KnowledgeBase)
_K, _C, _B = _KNOWLEDGE.c, _CHUNK.c, _BASES.c

# Statements of the graph task's hot path, built once with bound parameters (see
# `db.accounting`). The base and the live document, key-share locked in that order (the order
# of the OF list) by one statement.
_HOLD_LIVE = (
    select(_K.id)
    .select_from(_BASES.join(_KNOWLEDGE, _K.kb_id == _B.id))
    .where(
        _B.id == bindparam("p_kb"),
        _B.status == KnowledgeBaseStatus.ACTIVE,
        _K.id == bindparam("p_id"),
        _K.attempt == bindparam("p_attempt"),
        _K.parse_status == ParseStatus.FINALIZING,
    )
    .with_for_update(read=True, key_share=True, of=[_BASES, _KNOWLEDGE])
)


def hold_live(session: Session, kb_id: uuid.UUID, knowledge_id: uuid.UUID, attempt: int) -> bool:
    """Key-share-lock the document and its base (`kb_id`, the document's) while `attempt` is
    still being extracted into the graph; False when the attempt is no longer live (re-parsed,
    cancelled, deleted).

    Held across a graph write, the lock fences it: every change that ends the attempt (a
    delete, a re-parse, a cancel, the base's deletion or graph switch) first locks the row
    `FOR UPDATE`, so it waits for the write to commit, and the purge that follows removes it.
    A key-share lock lets the sibling chunks' settlements update the document meanwhile (a
    share lock would make two settling siblings wait on each other). The base is locked first,
    in the order a base deletion takes them, so the two never deadlock.
    """
    params = {"p_id": knowledge_id, "p_kb": kb_id, "p_attempt": attempt}
    return session.execute(_HOLD_LIVE, params).first() is not None


# A stage's progress merged into the document's, while the attempt is current and working.
_SET_STAGE = (
    update(_KNOWLEDGE)
    .where(
        _K.id == bindparam("p_id"),
        _K.attempt == bindparam("p_attempt"),
        _K.parse_status.in_(ParseStatus.working()),
    )
    .values(progress=_K.progress.op("||")(bindparam("p_stages", type_=_K.progress.type)))
)


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
    params = {"p_id": knowledge_id, "p_attempt": attempt, "p_stages": {str(stage): progress}}
    result = session.execute(_SET_STAGE, params)
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


_SETTLE_CHUNK = (
    update(_CHUNK)
    .where(
        _C.id == bindparam("p_chunk"),
        _C.knowledge_id == bindparam("p_id"),
        _C.attempt == bindparam("p_attempt"),
        _C.graph_status == GraphStatus.PENDING,
    )
    .values(
        graph_status=bindparam("p_outcome", type_=_C.graph_status.type),
        graph_error=bindparam("p_error", type_=_C.graph_error.type),
        entity_keys=bindparam("p_keys", type_=_C.entity_keys.type),
    )
    .returning(_C.id)
    .cte("settled")
)
_remaining = func.greatest(_K.pending_subtasks_count - 1, 0)
# The chunk's settlement and the document's release in one statement: the document is
# released only when the chunk was settled by it (the CTE returned its row).
_SETTLE_AND_RELEASE = (
    update(_KNOWLEDGE)
    .where(
        _K.id == bindparam("p_id"),
        _K.attempt == bindparam("p_attempt"),
        exists(select(_SETTLE_CHUNK.c.id)),
    )
    .values(
        pending_subtasks_count=_remaining,
        failed_chunk_count=_K.failed_chunk_count + bindparam("p_failed", type_=Integer),
        parse_status=case(
            (
                (_K.parse_status == ParseStatus.FINALIZING) & (_remaining == 0),
                ParseStatus.COMPLETED,
            ),
            else_=_K.parse_status,
        ),
        status_changed_at=func.now(),
        **COST_INCREMENTS,
    )
    .returning(_K.parse_status)
)


def finish_chunk_subtask(
    session: Session,
    knowledge_id: uuid.UUID,
    attempt: int,
    chunk_id: uuid.UUID,
    outcome: GraphStatus,
    error: str | None = None,
    cost: ChunkCost | None = None,
    entity_keys: Sequence[str] = (),
) -> ParseStatus | None:
    """Settle one chunk's graph work for good and release the document's counter exactly once;
    the document's status after it, or None when this call settled nothing.

    The chunk's own status is the guard: only the first settlement of a `pending` chunk counts,
    so a task delivered twice decrements once. The decrement is clamped at zero, and the
    settlement that brings the counter to zero promotes the document to `completed`. `cost`,
    what the task spent, is added by the same UPDATE of the document; `entity_keys`, the keys
    the chunk's graph named, go into the chunk's own UPDATE (a chunk row holds a vector: one
    row version a settlement, not two).
    """
    params = {
        "p_chunk": chunk_id,
        "p_id": knowledge_id,
        "p_attempt": attempt,
        "p_outcome": outcome,
        "p_error": error,
        "p_keys": list(entity_keys),
        "p_failed": 1 if outcome is GraphStatus.FAILED else 0,
        **cost_params(cost or ChunkCost()),
    }
    status = session.execute(_SETTLE_AND_RELEASE, params).scalar_one_or_none()
    return None if status is None else ParseStatus(status)
