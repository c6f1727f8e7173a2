"""The outbox relay: one pass sends due task rows to the broker and watches the ones in flight.

A pass (one at a time across the cluster, under an advisory lock; a pass woken by a kick, when
a task settled or a request wrote rows, is a sending pass and does only 4: the next full pass,
within `relay_interval_s`, does the rest):
1. rows sent whose task has not settled within `visibility_timeout_s` (counted from the send, or
   from the task's last start) are due again: their message or their worker was lost. A row
   whose task had started counts one resend;
2. rows sent to a broker that has lost its messages since (its epoch changed: restarted empty,
   flushed, failed over) and not started are due again at once, without counting;
3. rows over `max_resends` are given up: their chunk or document fails with the reason;
4. due rows are sent: every direct row (deletes, memory), parse rows while fewer than
   `parse_in_flight` are in flight, graph rows while fewer than `graph_in_flight` are, picked
   round-robin across documents so a small document never waits behind a large one's chunks.
The due rows go to the broker in one batch; a broker that refuses it leaves them due for the
next pass. The entity resolution rows of one base share one message per pass: the run it starts
(or the run holding the base's turn) takes every live row of the base, so the others would only
find the work taken (graphrag/ingest/graph/entity_resolution.py). They are marked sent all the
same, so a lost message leaves each to its own visibility timeout.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from pydantic import BaseModel
from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    bindparam,
    case,
    cast,
    func,
    literal,
    null,
    select,
    union_all,
    update,
)
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import EvalRunStatus, GraphStatus, OutboxLane, OutboxStatus
from graphrag.db.lifecycle import finish_chunk_subtask, mark_failed
from graphrag.db.models import EvalRun, Knowledge, OutboxTask, core_table
from graphrag.db.outbox import TaskName
from graphrag.errors import BrokerUnavailableError
from graphrag.settings import OutboxSettings
from graphrag.task_queue import TaskQueue

__all__ = ["RelayReport", "pick_due", "relay_once"]

log = logging.getLogger(__name__)

# Any constant shared by every relay: pg_try_advisory_xact_lock lets one pass run at a time,
# so two relays never both fill the same in-flight room.
_RELAY_LOCK = 0x6F7574626F78

_TRY_LOCK = select(func.pg_try_advisory_xact_lock(_RELAY_LOCK))

_LOST = "no settlement within the visibility timeout"

_OUTBOX = core_table(OutboxTask)
_O = _OUTBOX.c


class RelayReport(BaseModel):
    ran: bool = True  # false: another relay held the lock
    sent: int = 0
    expired: int = 0  # past the visibility timeout
    rearmed: int = 0  # sent to a broker that has lost its messages since
    given_up: int = 0
    broker_error: str | None = None
    more: bool = False  # a full batch went out: more may be due at once


def relay_once(
    sessions: sessionmaker[Session],
    sender: TaskQueue,
    settings: OutboxSettings,
    *,
    sweep: bool = True,
) -> RelayReport:
    """Run one relay pass; never raises for a broker that is down. `sweep` False: a sending
    pass, which leaves the visibility timeouts and the giving up to the next full one."""
    with session_scope(sessions) as session:
        locked = session.execute(_TRY_LOCK).scalar()
        if not locked:
            return RelayReport(ran=False)
        report = _pass(session, sender, settings, sweep)
    if report.broker_error:
        log.warning("outbox relay: broker unavailable (%s)", report.broker_error)
    if report.expired or report.rearmed or report.given_up:
        log.warning("outbox relay: %s", report.model_dump_json())
    return report


def _pass(
    session: Session, sender: TaskQueue, settings: OutboxSettings, sweep: bool
) -> RelayReport:
    report = RelayReport(expired=_expire(session, settings) if sweep else 0)
    try:
        epoch: str | None = sender.broker_epoch()
    except BrokerUnavailableError as exc:
        epoch, report.broker_error = None, exc.message
    if sweep and epoch is not None:
        report.rearmed = _rearm_lost(session, epoch)
    if sweep:
        report.given_up = _give_up(session, settings)
    if epoch is not None:
        rows = pick_due(session, settings)
        report.sent, report.broker_error = _send(session, sender, rows, epoch)
        report.more = report.broker_error is None and len(rows) >= settings.batch_size
    return report


# The full pass's sweeps, built once on the table with bound parameters (each process runs
# one every `relay_interval_s`; the ORM's bulk update paths cost more CPU than the statements).
_REARM_LOST = (
    update(_OUTBOX)
    .where(
        _O.status == OutboxStatus.SENT,
        _O.started_at.is_(None),
        _O.broker_epoch.is_distinct_from(bindparam("p_epoch", type_=_O.broker_epoch.type)),
    )
    .values(status=OutboxStatus.PENDING)
)
_lease_start = func.coalesce(_O.started_at, _O.sent_at)
_visibility = func.make_interval(0, 0, 0, 0, 0, 0, bindparam("p_visibility_s", type_=Integer))
_started = _O.started_at.is_not(None)
_EXPIRE = (
    update(_OUTBOX)
    .where(_O.status == OutboxStatus.SENT, _lease_start < func.now() - _visibility)
    .values(
        status=OutboxStatus.PENDING,
        resends=_O.resends + case((_started, 1), else_=0),
        last_error=case((_started, _LOST), else_=_O.last_error),
        started_at=None,
    )
)


def _rearm_lost(session: Session, epoch: str) -> int:
    result = session.execute(_REARM_LOST, {"p_epoch": epoch})
    return int(result.rowcount)  # type: ignore[attr-defined]  # CursorResult of an UPDATE


def _expire(session: Session, settings: OutboxSettings) -> int:
    result = session.execute(_EXPIRE, {"p_visibility_s": settings.visibility_timeout_s})
    return int(result.rowcount)  # type: ignore[attr-defined]  # CursorResult of an UPDATE


def _give_up(session: Session, settings: OutboxSettings) -> int:
    """Fail the work of rows that exhausted their resends, and keep the rows as failed."""
    rows = session.execute(
        select(OutboxTask)
        .where(
            OutboxTask.status == OutboxStatus.PENDING,
            OutboxTask.resends > settings.max_resends,
        )
        .with_for_update(skip_locked=True)
    ).scalars()
    count = 0
    for row in rows:
        reason = f"{row.task_name} given up after {row.resends} resends: {row.last_error or _LOST}"
        _fail_work(session, row, reason)
        row.status = OutboxStatus.FAILED
        count += 1
    return count


def _fail_work(session: Session, row: OutboxTask, reason: str) -> None:
    if row.task_name == TaskName.EXTRACT_CHUNK and row.knowledge_id and row.chunk_id:
        attempt = int(row.args[1])
        finish_chunk_subtask(
            session, row.knowledge_id, attempt, row.chunk_id, GraphStatus.FAILED, reason
        )
    elif row.task_name == TaskName.PROCESS_DOCUMENT and row.knowledge_id:
        mark_failed(session, row.knowledge_id, int(row.args[1]), reason)
    elif row.task_name == TaskName.RUN_EVALUATION:
        session.execute(
            update(EvalRun)
            .where(
                EvalRun.id == uuid.UUID(str(row.args[0])),
                EvalRun.status.in_((EvalRunStatus.QUEUED, EvalRunStatus.RUNNING)),
            )
            .values(status=EvalRunStatus.FAILED, error=reason, finished_at=func.now())
        )
    log.error("outbox row %d given up: %s", row.id, reason)


_K = core_table(Knowledge).c
_COLUMNS = (_O.id, _O.task_name, _O.args)
# A direct row's base when it is a resolution row (the pass sends one message per base); else,
# and in the other lanes, null.
_SHARED_BY = case(
    (
        _O.task_name == TaskName.RESOLVE_ENTITIES.value,
        select(_K.kb_id).where(_K.id == _O.knowledge_id).scalar_subquery(),
    ),
    else_=None,
)


def _room(lane: OutboxLane, cap: str) -> ColumnElement[int]:
    """How many more rows a gated lane may send now: its cap (bound as `cap`) less its rows in
    flight."""
    in_flight = (
        select(func.count()).where(_O.lane == lane, _O.status == OutboxStatus.SENT)
    ).scalar_subquery()
    return func.greatest(bindparam(cap, type_=Integer) - in_flight, 0)


def _due(lane: OutboxLane, part: int) -> Select[Any]:
    """A lane's due rows, with the lane's place in the sending order (`part`)."""
    shared_by = _SHARED_BY if lane is OutboxLane.DIRECT else cast(null(), _K.kb_id.type)
    return select(*_COLUMNS, shared_by.label("shared_by"), literal(part).label("part")).where(
        _O.lane == lane,
        _O.status == OutboxStatus.PENDING,
        _O.resends <= bindparam("p_max_resends"),
    )


# The sending pass's statements, built once with bound parameters: a cluster runs several passes a
# second while it ingests, and building them on each pass cost more CPU than running them.
# Round-robin within the graph lane: each document's n-th due row before any document's (n+1)-th.
_turn = func.row_number().over(partition_by=_O.knowledge_id, order_by=_O.id).label("turn")
_ranked = _due(OutboxLane.GRAPH, 2).add_columns(_turn).subquery()
# One statement for the three lanes (it ran as four: a pass's largest cost after the send):
# every direct row up to the batch size, then parse rows and graph rows up to their rooms.
_lanes = union_all(
    _due(OutboxLane.DIRECT, 0)
    .add_columns(literal(0).label("turn"))
    .order_by(_O.id)
    .limit(bindparam("p_batch")),
    _due(OutboxLane.PARSE, 1)
    .add_columns(literal(0).label("turn"))
    .order_by(_O.id)
    .limit(_room(OutboxLane.PARSE, "p_parse_cap")),
    select(_ranked)
    .order_by(_ranked.c.turn, _ranked.c.id)
    .limit(_room(OutboxLane.GRAPH, "p_graph_cap")),
).subquery()
_DUE = select(_lanes.c.id, _lanes.c.task_name, _lanes.c.args, _lanes.c.shared_by).order_by(
    _lanes.c.part, _lanes.c.turn, _lanes.c.id
)
_MARK_SENT = (
    update(_OUTBOX)
    .where(_O.id.in_(bindparam("p_ids", expanding=True)), _O.status == OutboxStatus.PENDING)
    .values(
        status=OutboxStatus.SENT,
        broker_epoch=bindparam("p_epoch", type_=_O.broker_epoch.type),
        sends=_O.sends + 1,
        sent_at=func.now(),
        started_at=None,
    )
)


_Due = tuple[int, str, list[Any], uuid.UUID | None]


def pick_due(session: Session, settings: OutboxSettings) -> list[_Due]:
    """The rows to send now, as (id, task name, args, the base whose message the row shares
    or None), in sending order."""
    params = {
        "p_max_resends": settings.max_resends,
        "p_batch": settings.batch_size,
        "p_parse_cap": settings.parse_in_flight,
        "p_graph_cap": settings.graph_in_flight,
    }
    return [
        (row_id, name, args, shared_by)
        for row_id, name, args, shared_by in session.execute(_DUE, params)
    ]


def _messages(rows: list[_Due]) -> list[tuple[str, list[Any]]]:
    """The rows' messages: one per row, but one per base for the rows that share one."""
    bases: set[uuid.UUID] = set()
    messages = []
    for _, name, args, shared_by in rows:
        if shared_by is not None:
            if shared_by in bases:
                continue
            bases.add(shared_by)
        messages.append((name, args))
    return messages


def _send(
    session: Session, sender: TaskQueue, rows: list[_Due], epoch: str
) -> tuple[int, str | None]:
    """Send the rows' messages as one batch and mark the rows sent (same transaction); a
    broker that refuses leaves them all due."""
    if not rows:
        return 0, None
    try:
        sender.send_batch(_messages(rows))
    except BrokerUnavailableError as exc:
        return 0, exc.message
    session.execute(_MARK_SENT, {"p_ids": [row[0] for row in rows], "p_epoch": epoch})
    return len(rows), None
