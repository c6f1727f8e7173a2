"""The transactional outbox: background tasks written as rows in the caller's transaction.

A document's state change and the task it calls for commit together or not at all, so a broker
that is down, restarted empty or failed over loses nothing: the relay (`graphrag.outbox.relay`)
sends the rows when it can, and a task's settlement deletes its row. One live row per piece of
work (`dedup_key`), so writing the same request twice asks for the work once.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from pydantic import BaseModel
from sqlalchemy import and_, bindparam, delete, func, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session
from sqlalchemy.sql.selectable import HasCTE

from graphrag.db.enums import OutboxLane, OutboxStatus
from graphrag.db.models import OutboxTask, core_table

__all__ = [
    "OutboxBacklog",
    "TaskArg",
    "TaskLease",
    "TaskName",
    "TaskRequest",
    "close_memory_session",
    "delete_document",
    "delete_knowledge_base",
    "enqueue",
    "extract_chunk",
    "outbox_backlog",
    "process_document",
    "record_failure",
    "record_retry",
    "record_start",
    "run_evaluation",
    "settle",
    "settle_all",
    "settled_with",
    "started_with",
    "task_key",
]

TaskArg = str | int
_Statement = TypeVar("_Statement", bound=HasCTE)

# The partial unique index's predicate: ON CONFLICT must name it to use the index.
_LIVE = text("status IN ('pending', 'sent')")


class TaskName(StrEnum):
    """The task names the workers register; producers only ever write these."""

    PROCESS_DOCUMENT = "document.process"
    DELETE_DOCUMENT = "document.delete"
    DELETE_KNOWLEDGE_BASE = "document.delete_kb"
    EXTRACT_CHUNK = "graph.extract_chunk"
    RESOLVE_ENTITIES = "graph.resolve_entities"
    CLOSE_MEMORY_SESSION = "memory.close_session"
    RUN_EVALUATION = "eval.run"


@dataclass(frozen=True)
class TaskRequest:
    """One task to run: its name, JSON arguments (ids only) and how the relay gates it."""

    name: TaskName
    args: tuple[TaskArg, ...]
    lane: OutboxLane = OutboxLane.DIRECT
    knowledge_id: uuid.UUID | None = None
    chunk_id: uuid.UUID | None = None

    @property
    def dedup_key(self) -> str:
        return task_key(self.name, self.args)


def task_key(name: str, args: Sequence[object]) -> str:
    """The identity of a piece of work: the task name with its arguments as sent."""
    return json.dumps([name, *args], separators=(",", ":"))


def process_document(knowledge_id: uuid.UUID, attempt: int) -> TaskRequest:
    return TaskRequest(
        TaskName.PROCESS_DOCUMENT,
        (str(knowledge_id), attempt),
        OutboxLane.PARSE,
        knowledge_id=knowledge_id,
    )


def delete_document(knowledge_id: uuid.UUID) -> TaskRequest:
    return TaskRequest(TaskName.DELETE_DOCUMENT, (str(knowledge_id),), knowledge_id=knowledge_id)


def delete_knowledge_base(kb_id: uuid.UUID) -> TaskRequest:
    return TaskRequest(TaskName.DELETE_KNOWLEDGE_BASE, (str(kb_id),))


def extract_chunk(knowledge_id: uuid.UUID, attempt: int, chunk_id: uuid.UUID) -> TaskRequest:
    return TaskRequest(
        TaskName.EXTRACT_CHUNK,
        (str(knowledge_id), attempt, str(chunk_id)),
        OutboxLane.GRAPH,
        knowledge_id=knowledge_id,
        chunk_id=chunk_id,
    )


def resolve_entities(knowledge_id: uuid.UUID) -> TaskRequest:
    return TaskRequest(TaskName.RESOLVE_ENTITIES, (str(knowledge_id),), knowledge_id=knowledge_id)


def run_evaluation(run_id: uuid.UUID) -> TaskRequest:
    return TaskRequest(TaskName.RUN_EVALUATION, (str(run_id),))


def close_memory_session(tenant_id: uuid.UUID, owner: str, session_id: uuid.UUID) -> TaskRequest:
    return TaskRequest(TaskName.CLOSE_MEMORY_SESSION, (str(tenant_id), owner, str(session_id)))


_OUTBOX = core_table(OutboxTask)
_O = _OUTBOX.c
# Built once on the table, not the model: the ORM's bulk insert cost a document's processing
# more CPU than the statement itself.
_ADD = insert(_OUTBOX).on_conflict_do_nothing(index_elements=[_O.dedup_key], index_where=_LIVE)
_REARM = insert(_OUTBOX).on_conflict_do_update(
    index_elements=[_O.dedup_key],
    index_where=_LIVE,
    set_={"status": OutboxStatus.PENDING, "started_at": None},
)


def enqueue(session: Session, *requests: TaskRequest, rearm: bool = False) -> None:
    """Write the requests in the caller's transaction; they are sent once it commits.

    A request whose work already has a live row adds nothing; with `rearm` that row is made due
    again (sent anew by the next relay pass), which is how a sweep re-sends lost work.
    """
    if not requests:
        return
    rows = [
        {
            "task_name": r.name.value,
            "args": list(r.args),
            "dedup_key": r.dedup_key,
            "lane": r.lane,
            "status": OutboxStatus.PENDING,
            "knowledge_id": r.knowledge_id,
            "chunk_id": r.chunk_id,
            "sends": 0,
            "resends": 0,
        }
        for r in requests
    ]
    session.execute(_REARM if rearm else _ADD, rows)


# A task's live row, by its work's identity; the statements below are built once (a worker runs
# them for every task) with the key as a bound parameter.
_LIVE_ROW = and_(_O.dedup_key == bindparam("p_key"), _O.status.in_(OutboxStatus.live()))
_RECORD_START = (
    update(_OUTBOX).where(_LIVE_ROW).values(status=OutboxStatus.SENT, started_at=func.now())
)
_RECORD_RETRY = update(_OUTBOX).where(_LIVE_ROW).values(sent_at=func.now())
_RECORD_FAILURE = (
    update(_OUTBOX)
    .where(_LIVE_ROW)
    .values(
        status=OutboxStatus.PENDING,
        resends=_O.resends + 1,
        last_error=bindparam("p_error", type_=_O.last_error.type),
        started_at=None,
    )
)
_SETTLE = delete(_OUTBOX).where(_LIVE_ROW)
_SETTLE_ALL = delete(_OUTBOX).where(
    _O.dedup_key.in_(bindparam("p_keys", expanding=True)), _O.status.in_(OutboxStatus.live())
)
# The rows of a task's name the relay marked sent in the same pass as the task's row (one
# transaction: the same `sent_at`) and not started yet: those its message stood for, and those
# of other bases whose own message is on its way (made due again, they get a second one, which
# finds its work taken or does it once).
_OWN_SEND = select(_O.sent_at).where(_LIVE_ROW).scalar_subquery()
_REARM_SHARED = (
    update(_OUTBOX)
    .where(
        _O.task_name == bindparam("p_name"),
        _O.status == OutboxStatus.SENT,
        _O.started_at.is_(None),
        _O.sent_at == _OWN_SEND,
    )
    .values(status=OutboxStatus.PENDING)
)


def _key(name: str, args: Sequence[object]) -> dict[str, str]:
    return {"p_key": task_key(name, args)}


def started_with(query: _Statement) -> _Statement:
    """`query`, renewing its task's lease (`TaskLease.renew`) in the same statement: a task
    that reads its work and renews its lease in one round trip. Bind `TaskLease.params()`."""
    return query.add_cte(_RECORD_START.cte("task_started"))


def settled_with(statement: _Statement) -> _Statement:
    """`statement`, deleting its task's row (`TaskLease.settle`) in the same statement: the
    write that ends a task and the end of its lease in one round trip. The row goes whatever
    the statement changes (a data-modifying CTE always runs). Bind `TaskLease.params()`."""
    return statement.add_cte(_SETTLE.cte("task_settled"))


def record_start(session: Session, name: str, args: Sequence[object]) -> bool:
    """A task began: its lease runs from now (a long queue wait is not a lost task). False when
    its work has no live row (settled already, or sent outside the outbox)."""
    result = session.execute(_RECORD_START, _key(name, args))
    return bool(result.rowcount)  # type: ignore[attr-defined]  # CursorResult of an UPDATE


def record_retry(session: Session, name: str, args: Sequence[object]) -> None:
    """A task scheduled its own retry: Celery still owns it, so it keeps its start time and is
    never re-sent as a lost message (only its visibility timeout can send it again)."""
    session.execute(_RECORD_RETRY, _key(name, args))


def record_failure(session: Session, name: str, args: Sequence[object], error: str) -> None:
    """A task ended with an unexpected error: send it again, counting it against the cap."""
    session.execute(_RECORD_FAILURE, {**_key(name, args), "p_error": error})


def settle(session: Session, name: str, args: Sequence[object]) -> bool:
    """A task ended for good: its row goes. False when there was none (sent outside the outbox)."""
    result = session.execute(_SETTLE, _key(name, args))
    return bool(result.rowcount)  # type: ignore[attr-defined]  # CursorResult of a DELETE


def settle_all(session: Session, name: str, args: Sequence[Sequence[object]]) -> None:
    """Tasks of one name that ended for good, in one statement: their rows go."""
    if args:
        session.execute(_SETTLE_ALL, {"p_keys": [task_key(name, each) for each in args]})


@dataclass(frozen=True)
class TaskLease:
    """A running task's hold on its outbox row, made by its worker wrapper from the name and
    the arguments it was sent with, and handed to the core function that does the work: that
    function renews it in the transaction that begins the work (the lease runs from then, so a
    long queue wait is not a lost task) and settles it in the transaction that ends the work,
    so the row goes with the work's last write. A retry or an unexpected error, which only
    Celery sees, is recorded by the worker's task signals."""

    name: str
    args: tuple[object, ...]

    def renew(self, session: Session) -> bool:
        """The task began (or goes on): its lease runs from now. False when its row is gone."""
        return record_start(session, self.name, self.args)

    def settle(self, session: Session) -> bool:
        """The task ended for good: its row goes (False when there was none)."""
        return settle(session, self.name, self.args)

    def hand_back_shared(self, session: Session) -> None:
        """Make due again the unstarted rows the relay sent with this task's row (it sends one
        message for the entity resolution rows of a base), for a task that cannot take them:
        the next relay pass sends them anew."""
        session.execute(_REARM_SHARED, {**self.params(), "p_name": self.name})

    def params(self) -> dict[str, str]:
        """The bound parameters of a statement built by `started_with`."""
        return _key(self.name, self.args)

    @classmethod
    def of(cls, request: TaskRequest) -> TaskLease:
        """The lease of the task `request` sends (for a caller that runs the work itself)."""
        return cls(request.name, request.args)


class OutboxBacklog(BaseModel):
    """Rows by state: `unsent` wait for the relay, `in_flight` wait for their task to settle."""

    unsent: int
    in_flight: int
    failed: int


def outbox_backlog(session: Session) -> OutboxBacklog:
    """Count the outbox rows by status (settled rows are gone)."""
    rows = session.execute(select(OutboxTask.status, func.count()).group_by(OutboxTask.status))
    counts = {status: count for status, count in rows}
    return OutboxBacklog(
        unsent=counts.get(OutboxStatus.PENDING, 0),
        in_flight=counts.get(OutboxStatus.SENT, 0),
        failed=counts.get(OutboxStatus.FAILED, 0),
    )
