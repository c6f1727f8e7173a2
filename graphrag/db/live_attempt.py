"""What the work of a live attempt does without changing its status: the lock that fences a
graph write, the progress of its stages, the end of a run."""

from __future__ import annotations

import uuid
from typing import Any, cast

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.orm import Session
from sqlalchemy.sql import ColumnElement

from graphrag.db.enums import KnowledgeBaseStatus, ParseStatus, Stage, StageStatus
from graphrag.db.models import Knowledge, KnowledgeBase, core_table

__all__ = ["SETTLED_RUN", "end_run", "hold_live", "merged_progress", "set_stage"]

_KNOWLEDGE, _BASES = core_table(Knowledge), core_table(KnowledgeBase)
_K, _B = _KNOWLEDGE.c, _BASES.c


def merged_progress(name: str) -> ColumnElement[Any]:
    """A document's `progress` with the stages bound as `name` merged in (each stage replaces
    its own key)."""
    return _K.progress.op("||")(bindparam(name, type_=_K.progress.type))


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
    .values(progress=merged_progress("p_stages"))
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
    result = cast(CursorResult[Any], session.execute(_SET_STAGE, params))
    return bool(result.rowcount)


# A run of `document.process` that ends (its write, a failure, finding its attempt stale) no
# longer counts as unsettled: the runs still counted are those that died with their worker.
SETTLED_RUN = func.greatest(_K.unsettled_runs - 1, 0)
_END_RUN = update(_KNOWLEDGE).where(_K.id == bindparam("p_id")).values(unsettled_runs=SETTLED_RUN)


def end_run(session: Session, knowledge_id: uuid.UUID) -> None:
    """A run ended without its write (it failed, or found its attempt stale): it did not die,
    so it no longer counts towards the document's poison budget."""
    session.execute(_END_RUN, {"p_id": knowledge_id})
