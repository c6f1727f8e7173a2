"""The document status machine and its counters, each transition one guarded UPDATE.

pending -> processing -> finalizing -> completed, or failed / cancelled / deleting.
`TRANSITIONS` declares every change of `knowledge.parse_status`: the statuses it leaves and the
one it reaches. Each is one statement built once on the table from its row of the table, guarded
by the attempt it belongs to, so the work of a superseded attempt changes nothing. No other
module writes the status (`tests/unit/test_lifecycle.py` checks both). A transition that calls
for work writes its tasks into the outbox in the same transaction: a document is never pending
(or finalizing, or deleting) without the task that moves it on.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from enum import StrEnum
from types import MappingProxyType
from typing import Any, NamedTuple, cast

from sqlalchemy import Integer, bindparam, case, exists, func, insert, select, tuple_, update
from sqlalchemy.engine import CursorResult, Row
from sqlalchemy.orm import Session
from sqlalchemy.sql import ColumnElement, Executable
from sqlalchemy.sql.dml import Update, UpdateBase

from graphrag.db.accounting import COST_INCREMENTS, COST_RESET, ChunkCost, cost_params
from graphrag.db.enums import GraphStatus, ParseStatus, Stage
from graphrag.db.live_attempt import SETTLED_RUN, merged_progress
from graphrag.db.models import Chunk, Knowledge, core_table
from graphrag.db.outbox import (
    TaskLease,
    delete_document,
    enqueue,
    extract_chunk,
    process_document,
    settled_with,
)

__all__ = [
    "STATEMENTS",
    "TRANSITIONS",
    "Rule",
    "Transition",
    "cancel",
    "claimable_attempt",
    "fail_poisoned",
    "finish_chunk_subtask",
    "give_up",
    "insert_pending",
    "mark_base_deleting",
    "mark_deleting",
    "mark_failed",
    "settle_indexing",
    "start_graph",
    "start_new_attempt",
    "start_processing",
    "stop_graph",
]


class Transition(StrEnum):
    """The named changes of a document's status."""

    ADD = "add"  # a new document
    CLAIM = "claim"  # a run of `document.process` takes the attempt
    POISONED = "poisoned"  # too many runs died with their worker
    QUEUE_GRAPH = "queue_graph"  # indexed, its chunks' graph tasks written
    INDEXED = "indexed"  # indexed, nothing for the graph
    FAIL = "fail"  # the attempt ended in an error
    GIVE_UP = "give_up"  # stuck past the reconciler's re-enqueue budget
    GRAPH_DONE = "graph_done"  # the last chunk task settled
    GRAPH_ON = "graph_on"  # the base's graph switched on: a completed document's graph is built
    GRAPH_OFF = "graph_off"  # the base's graph switched off: the extraction owed stops
    REPARSE = "reparse"  # a new attempt
    CANCEL = "cancel"
    DELETE = "delete"
    DELETE_BASE = "delete_base"  # the document's base is deleted


class Rule(NamedTuple):
    """The statuses a transition may leave, and the one it reaches."""

    sources: frozenset[ParseStatus]
    target: ParseStatus


_WORKING = ParseStatus.working()
_LIVE = frozenset(ParseStatus) - {ParseStatus.DELETING}
# A document a run of `document.process` may still take (a second delivery of a run in progress).
_CLAIMABLE = frozenset({ParseStatus.PENDING, ParseStatus.PROCESSING})

TRANSITIONS: Mapping[Transition, Rule] = MappingProxyType(
    {
        Transition.ADD: Rule(frozenset(), ParseStatus.PENDING),
        Transition.CLAIM: Rule(_CLAIMABLE, ParseStatus.PROCESSING),
        Transition.POISONED: Rule(_CLAIMABLE, ParseStatus.FAILED),
        Transition.QUEUE_GRAPH: Rule(_CLAIMABLE, ParseStatus.FINALIZING),
        Transition.INDEXED: Rule(_CLAIMABLE, ParseStatus.COMPLETED),
        Transition.FAIL: Rule(_WORKING, ParseStatus.FAILED),
        Transition.GIVE_UP: Rule(_WORKING, ParseStatus.FAILED),
        Transition.GRAPH_DONE: Rule(frozenset({ParseStatus.FINALIZING}), ParseStatus.COMPLETED),
        Transition.GRAPH_ON: Rule(frozenset({ParseStatus.COMPLETED}), ParseStatus.FINALIZING),
        Transition.GRAPH_OFF: Rule(frozenset({ParseStatus.FINALIZING}), ParseStatus.COMPLETED),
        Transition.REPARSE: Rule(_LIVE, ParseStatus.PENDING),
        Transition.CANCEL: Rule(_WORKING, ParseStatus.CANCELLED),
        Transition.DELETE: Rule(_LIVE, ParseStatus.DELETING),
        Transition.DELETE_BASE: Rule(_LIVE, ParseStatus.DELETING),
    }
)

_KNOWLEDGE, _CHUNK = core_table(Knowledge), core_table(Chunk)
_K, _C = _KNOWLEDGE.c, _CHUNK.c


def _sources(transition: Transition) -> list[ParseStatus]:
    return sorted(TRANSITIONS[transition].sources)


def claimable_attempt() -> tuple[ColumnElement[bool], ...]:
    """The document while `p_attempt` is its attempt and a run may take it (bind `p_id`,
    `p_attempt`): the claim's guard, for the reads that lock the row before it."""
    return (
        _K.id == bindparam("p_id"),
        _K.attempt == bindparam("p_attempt"),
        _K.parse_status.in_(_sources(Transition.CLAIM)),
    )


def _guarded(transition: Transition, **values: Any) -> Update:
    """The transition's UPDATE of one document's attempt (bind `p_id`, `p_attempt`): its status
    set to the rule's target while it is one of the rule's sources."""
    rule = TRANSITIONS[transition]
    return (
        update(_KNOWLEDGE)
        .where(
            _K.id == bindparam("p_id"),
            _K.attempt == bindparam("p_attempt"),
            _K.parse_status.in_(sorted(rule.sources)),
        )
        .values(parse_status=rule.target, status_changed_at=func.now(), **values)
    )


def _changed(session: Session, statement: Executable, params: Mapping[str, Any]) -> bool:
    """Run an UPDATE; whether it changed a row."""
    result = cast(CursorResult[Any], session.execute(statement, params))
    return bool(result.rowcount)


_ADD = (
    insert(_KNOWLEDGE)
    .values(parse_status=TRANSITIONS[Transition.ADD].target, attempt=1)
    .returning(*_KNOWLEDGE.c)
)


def insert_pending(session: Session, row: Mapping[str, Any]) -> Row[Any]:
    """Insert a new document (its first attempt, `pending`) with its processing task; the new
    row, read back by the INSERT. An `IntegrityError` (the same content raced in) propagates."""
    added = session.execute(_ADD, dict(row)).one()
    enqueue(session, process_document(added.id, added.attempt))
    return added


_CLAIM = _guarded(
    Transition.CLAIM,
    deliveries=_K.deliveries + 1,
    unsettled_runs=_K.unsettled_runs + 1,
    progress=merged_progress("p_stages"),
)


def start_processing(
    session: Session, knowledge_id: uuid.UUID, attempt: int, stages: Mapping[Stage, Any]
) -> bool:
    """Take the attempt for a run, counting the run (per attempt and over the document's life)
    and merging `stages` into its progress; False when the attempt cannot be taken."""
    params = {"p_id": knowledge_id, "p_attempt": attempt, "p_stages": dict(stages)}
    return _changed(session, _CLAIM, params)


_POISONED = _guarded(
    Transition.POISONED,
    error=bindparam("p_error", type_=_K.error.type),
    pending_subtasks_count=0,
)


def fail_poisoned(session: Session, knowledge_id: uuid.UUID, attempt: int, reason: str) -> bool:
    """Fail an attempt instead of running it again: its runs keep dying with their worker."""
    params = {"p_id": knowledge_id, "p_attempt": attempt, "p_error": reason}
    return _changed(session, _POISONED, params)


# The run's write: its counts, stages and status in one statement, the run settled with it.
_WRITTEN: dict[str, Any] = {
    "chunk_count": bindparam("p_chunks"),
    "page_count": bindparam("p_pages"),
    "stats": bindparam("p_stats", type_=_K.stats.type),
    "pending_subtasks_count": bindparam("p_pending"),
    "progress": merged_progress("p_stages"),
    "unsettled_runs": SETTLED_RUN,
}
_QUEUE_GRAPH = _guarded(Transition.QUEUE_GRAPH, **_WRITTEN)
_INDEXED = _guarded(Transition.INDEXED, **_WRITTEN)


def settle_indexing(
    session: Session,
    knowledge_id: uuid.UUID,
    attempt: int,
    graph_chunks: Sequence[uuid.UUID],
    written: Mapping[str, Any],
) -> ParseStatus | None:
    """End a run's write: `finalizing` with one graph task per chunk of `graph_chunks` in the
    outbox, or `completed` when there is none. `written` binds the counts and stages
    (`p_chunks`, `p_pages`, `p_stats`, `p_stages`). The status reached, None when the attempt
    could no longer be written."""
    params = {"p_id": knowledge_id, "p_attempt": attempt, "p_pending": len(graph_chunks)}
    transition = Transition.QUEUE_GRAPH if graph_chunks else Transition.INDEXED
    statement = _QUEUE_GRAPH if graph_chunks else _INDEXED
    if not _changed(session, statement, {**written, **params}):
        return None
    enqueue(session, *(extract_chunk(knowledge_id, attempt, c) for c in graph_chunks))
    return TRANSITIONS[transition].target


_FAIL = _guarded(
    Transition.FAIL,
    error=bindparam("p_error", type_=_K.error.type),
    pending_subtasks_count=0,
)


def mark_failed(session: Session, knowledge_id: uuid.UUID, attempt: int, reason: str) -> bool:
    """End the attempt as `failed` with a readable reason, unless it was superseded meanwhile."""
    return _changed(session, _FAIL, {"p_id": knowledge_id, "p_attempt": attempt, "p_error": reason})


_GIVE_UP = (
    update(_KNOWLEDGE)
    .where(
        tuple_(_K.id, _K.attempt).in_(bindparam("p_attempts", expanding=True)),
        _K.parse_status.in_(_sources(Transition.GIVE_UP)),
        _K.requeues >= bindparam("p_max_requeues", type_=Integer),
    )
    .values(
        parse_status=TRANSITIONS[Transition.GIVE_UP].target,
        error=bindparam("p_error", type_=_K.error.type),
        pending_subtasks_count=0,
        status_changed_at=func.now(),
    )
    .returning(_K.id)
)


def give_up(
    session: Session,
    attempts: Sequence[tuple[uuid.UUID, int]],
    max_requeues: int,
    reason: str,
) -> list[uuid.UUID]:
    """Fail those of the (document, attempt) pairs re-enqueued `max_requeues` times already;
    their ids."""
    if not attempts:
        return []
    params = {"p_attempts": list(attempts), "p_max_requeues": max_requeues, "p_error": reason}
    return list(session.execute(_GIVE_UP, params).scalars())


_GRAPH_ON = _guarded(
    Transition.GRAPH_ON,
    pending_subtasks_count=bindparam("p_pending", type_=Integer),
    failed_chunk_count=func.greatest(
        _K.failed_chunk_count - bindparam("p_retried", type_=Integer), 0
    ),
    progress=merged_progress("p_stages"),
)


def start_graph(
    session: Session,
    knowledge_id: uuid.UUID,
    attempt: int,
    chunks: Sequence[uuid.UUID],
    retried_failures: int,
    stages: Mapping[Stage, Any],
) -> bool:
    """Send a completed document's `chunks` to extraction (its base's graph was switched on):
    `finalizing` with one graph task per chunk, the failed chunks among them
    (`retried_failures`) no longer counted as failed, `stages` merged into its progress."""
    params = {
        "p_id": knowledge_id,
        "p_attempt": attempt,
        "p_pending": len(chunks),
        "p_retried": retried_failures,
        "p_stages": dict(stages),
    }
    if not _changed(session, _GRAPH_ON, params):
        return False
    enqueue(session, *(extract_chunk(knowledge_id, attempt, c) for c in chunks))
    return True


_GRAPH_OFF = _guarded(
    Transition.GRAPH_OFF, pending_subtasks_count=0, progress=merged_progress("p_stages")
)


def stop_graph(
    session: Session, knowledge_id: uuid.UUID, attempt: int, stages: Mapping[Stage, Any]
) -> bool:
    """Settle a finalizing document at once (its base's graph was switched off), `stages`
    merged into its progress."""
    params = {"p_id": knowledge_id, "p_attempt": attempt, "p_stages": dict(stages)}
    return _changed(session, _GRAPH_OFF, params)


# A new attempt starts from zero, except the runs that died: a re-parse does not refill the
# poison budget.
_REPARSE = _guarded(
    Transition.REPARSE,
    attempt=_K.attempt + 1,
    deliveries=0,
    requeues=0,
    pending_subtasks_count=0,
    error=None,
    progress={},
    **COST_RESET,
).returning(_K.attempt)


def start_new_attempt(session: Session, knowledge_id: uuid.UUID, attempt: int) -> int | None:
    """Supersede `attempt` with a new one, `pending` with its processing task; the new attempt,
    None when `attempt` was not current. The old attempt's tasks find themselves stale."""
    params = {"p_id": knowledge_id, "p_attempt": attempt}
    new = session.execute(_REPARSE, params).scalar_one_or_none()
    if new is not None:
        enqueue(session, process_document(knowledge_id, new))
    return new


_CANCEL = _guarded(Transition.CANCEL, pending_subtasks_count=0)


def cancel(session: Session, knowledge_id: uuid.UUID, attempt: int) -> bool:
    """Stop a working attempt; its running tasks find it cancelled and stop. False when the
    attempt is not working (or not current)."""
    return _changed(session, _CANCEL, {"p_id": knowledge_id, "p_attempt": attempt})


_DELETE = _guarded(Transition.DELETE)


def mark_deleting(session: Session, knowledge_id: uuid.UUID, attempt: int) -> bool:
    """Hide the document for good, with the task that purges it; False when it was not live."""
    if not _changed(session, _DELETE, {"p_id": knowledge_id, "p_attempt": attempt}):
        return False
    enqueue(session, delete_document(knowledge_id))
    return True


_DELETE_BASE = (
    update(_KNOWLEDGE)
    .where(
        _K.kb_id == bindparam("p_kb"),
        _K.parse_status.in_(_sources(Transition.DELETE_BASE)),
    )
    .values(parse_status=TRANSITIONS[Transition.DELETE_BASE].target)
)


def mark_base_deleting(session: Session, kb_id: uuid.UUID) -> None:
    """Hide every document of a base being deleted, whatever its attempt (the base's purge
    removes them all)."""
    session.execute(_DELETE_BASE, {"p_kb": kb_id})


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
        graph_drops=bindparam("p_drops", type_=_C.graph_drops.type),
        graph_trace=bindparam("p_trace", type_=_C.graph_trace.type),
    )
    .returning(_C.id)
    .cte("settled")
)
_remaining = func.greatest(_K.pending_subtasks_count - 1, 0)
# The chunk's settlement and the document's release in one statement: the document is
# released only when the chunk was settled by it (the CTE returned its row); the release that
# leaves nothing pending completes a finalizing document.
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
                _K.parse_status.in_(_sources(Transition.GRAPH_DONE)) & (_remaining == 0),
                TRANSITIONS[Transition.GRAPH_DONE].target,
            ),
            else_=_K.parse_status,
        ),
        status_changed_at=func.now(),
        **COST_INCREMENTS,
    )
    .returning(_K.parse_status)
)

_SETTLE_RELEASE_AND_END_TASK = settled_with(_SETTLE_AND_RELEASE)


def finish_chunk_subtask(
    session: Session,
    knowledge_id: uuid.UUID,
    attempt: int,
    chunk_id: uuid.UUID,
    outcome: GraphStatus,
    error: str | None = None,
    cost: ChunkCost | None = None,
    entity_keys: Sequence[str] = (),
    graph_drops: Mapping[str, int] | None = None,
    trace: Mapping[str, Any] | None = None,
    lease: TaskLease | None = None,
) -> ParseStatus | None:
    """Settle one chunk's graph work for good and release the document's counter exactly once;
    the document's status after it, or None when this call settled nothing. With `lease`, the
    same statement deletes the task's outbox row (whether or not it settled the chunk).

    The chunk's own status is the guard: only the first settlement of a `pending` chunk counts,
    so a task delivered twice decrements once. The decrement is clamped at zero, and the
    settlement that brings the counter to zero promotes the document to `completed`. `cost`,
    what the task spent, is added by the same UPDATE of the document; `entity_keys`, the keys
    the chunk's graph named, `graph_drops`, what its cleanup left out, and `trace`, what the
    extraction read, go into the chunk's own UPDATE (a chunk row holds a vector: one row version
    a settlement, not two).
    """
    params = {
        "p_chunk": chunk_id,
        "p_id": knowledge_id,
        "p_attempt": attempt,
        "p_outcome": outcome,
        "p_error": error,
        "p_keys": list(entity_keys),
        "p_drops": dict(graph_drops or {}),
        "p_trace": None if trace is None else dict(trace),
        "p_failed": 1 if outcome is GraphStatus.FAILED else 0,
        **cost_params(cost or ChunkCost()),
    }
    statement = _SETTLE_AND_RELEASE
    if lease is not None:
        statement, params = _SETTLE_RELEASE_AND_END_TASK, {**params, **lease.params()}
    status = session.execute(statement, params).scalar_one_or_none()
    return None if status is None else ParseStatus(status)


# Each transition's statement, for the tests that hold every guard to `TRANSITIONS`.
STATEMENTS: Mapping[Transition, UpdateBase] = MappingProxyType(
    {
        Transition.ADD: _ADD,
        Transition.CLAIM: _CLAIM,
        Transition.POISONED: _POISONED,
        Transition.QUEUE_GRAPH: _QUEUE_GRAPH,
        Transition.INDEXED: _INDEXED,
        Transition.FAIL: _FAIL,
        Transition.GIVE_UP: _GIVE_UP,
        Transition.GRAPH_DONE: _SETTLE_AND_RELEASE,
        Transition.GRAPH_ON: _GRAPH_ON,
        Transition.GRAPH_OFF: _GRAPH_OFF,
        Transition.REPARSE: _REPARSE,
        Transition.CANCEL: _CANCEL,
        Transition.DELETE: _DELETE,
        Transition.DELETE_BASE: _DELETE_BASE,
    }
)
