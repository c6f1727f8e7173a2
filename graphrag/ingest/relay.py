"""The outbox relay: one pass sends due task rows to the broker and watches the ones in flight.

A pass (one at a time across the cluster, under an advisory lock; a pass woken by a kick, when
a task settled or a request wrote rows, is a sending pass and does only 2 and 4):
1. rows sent whose task has not settled within `visibility_timeout_s` (counted from the send, or
   from the task's last start) are due again: their message or their worker was lost. A row
   whose task had started counts one resend;
2. rows sent to a broker that has lost its messages since (its epoch changed: restarted empty,
   flushed, failed over) and not started are due again at once, without counting;
3. rows over `max_resends` are given up: their chunk or document fails with the reason;
4. due rows are sent: every direct row (deletes, memory), parse rows while fewer than
   `parse_in_flight` are in flight, graph rows while fewer than `graph_in_flight` are, picked
   round-robin across documents so a small document never waits behind a large one's chunks.
A broker that refuses a message ends the sending; the rows wait for the next pass.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel
from sqlalchemy import Select, case, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import GraphStatus, OutboxLane, OutboxStatus
from graphrag.db.lifecycle import finish_chunk_subtask, mark_failed
from graphrag.db.models import OutboxTask
from graphrag.db.outbox import TaskName
from graphrag.errors import BrokerUnavailableError
from graphrag.settings import OutboxSettings
from graphrag.task_queue import TaskQueue

__all__ = ["RelayReport", "pick_due", "relay_once"]

log = logging.getLogger(__name__)

# Any constant shared by every relay: pg_try_advisory_xact_lock lets one pass run at a time,
# so two relays never both fill the same in-flight room.
_RELAY_LOCK = 0x6F7574626F78

_LOST = "no settlement within the visibility timeout"


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
        locked = session.execute(select(func.pg_try_advisory_xact_lock(_RELAY_LOCK))).scalar()
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
    if epoch is not None:
        report.rearmed = _rearm_lost(session, epoch)
    if sweep:
        report.given_up = _give_up(session, settings)
    if epoch is not None:
        rows = pick_due(session, settings)
        report.sent, report.broker_error = _send(session, sender, rows, epoch)
        report.more = report.broker_error is None and len(rows) >= settings.batch_size
    return report


def _rearm_lost(session: Session, epoch: str) -> int:
    result = session.execute(
        update(OutboxTask)
        .where(
            OutboxTask.status == OutboxStatus.SENT,
            OutboxTask.started_at.is_(None),
            OutboxTask.broker_epoch.is_distinct_from(epoch),
        )
        .values(status=OutboxStatus.PENDING)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]  # CursorResult of an UPDATE


def _expire(session: Session, settings: OutboxSettings) -> int:
    lease_start = func.coalesce(OutboxTask.started_at, OutboxTask.sent_at)
    visibility = func.make_interval(0, 0, 0, 0, 0, 0, settings.visibility_timeout_s)
    started = OutboxTask.started_at.is_not(None)
    result = session.execute(
        update(OutboxTask)
        .where(
            OutboxTask.status == OutboxStatus.SENT,
            lease_start < func.now() - visibility,
        )
        .values(
            status=OutboxStatus.PENDING,
            resends=OutboxTask.resends + case((started, 1), else_=0),
            last_error=case((started, _LOST), else_=OutboxTask.last_error),
            started_at=None,
        )
    )
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
    log.error("outbox row %d given up: %s", row.id, reason)


def _rooms(session: Session, settings: OutboxSettings) -> dict[OutboxLane, int]:
    """How many more rows the gated lanes may send now (their cap less the rows in flight)."""
    caps = {OutboxLane.PARSE: settings.parse_in_flight, OutboxLane.GRAPH: settings.graph_in_flight}
    counted = session.execute(
        select(OutboxTask.lane, func.count())
        .where(OutboxTask.lane.in_(list(caps)), OutboxTask.status == OutboxStatus.SENT)
        .group_by(OutboxTask.lane)
    )
    in_flight = {lane: int(count) for lane, count in counted}
    return {lane: max(cap - in_flight.get(lane, 0), 0) for lane, cap in caps.items()}


def _due(lane: OutboxLane, settings: OutboxSettings) -> list[Any]:
    return [
        OutboxTask.lane == lane,
        OutboxTask.status == OutboxStatus.PENDING,
        OutboxTask.resends <= settings.max_resends,
    ]


_Due = tuple[int, str, list[Any]]


def _fetch(session: Session, query: Select[int, str, list[Any]]) -> list[_Due]:
    return [(row_id, name, args) for row_id, name, args in session.execute(query)]


def pick_due(session: Session, settings: OutboxSettings) -> list[_Due]:
    """The rows to send now, as (id, task name, args), in sending order."""
    picked: list[_Due] = []
    columns = (OutboxTask.id, OutboxTask.task_name, OutboxTask.args)
    direct = select(*columns).where(*_due(OutboxLane.DIRECT, settings)).order_by(OutboxTask.id)
    picked += _fetch(session, direct.limit(settings.batch_size))
    rooms = _rooms(session, settings)
    parse_room = rooms[OutboxLane.PARSE]
    if parse_room:
        parse = select(*columns).where(*_due(OutboxLane.PARSE, settings)).order_by(OutboxTask.id)
        picked += _fetch(session, parse.limit(parse_room))
    graph_room = rooms[OutboxLane.GRAPH]
    if graph_room:
        # Round-robin: each document's n-th due row comes before any document's (n+1)-th.
        turn = func.row_number().over(partition_by=OutboxTask.knowledge_id, order_by=OutboxTask.id)
        due = select(*columns, turn.label("turn")).where(*_due(OutboxLane.GRAPH, settings))
        ranked = due.subquery()
        fair = (
            select(ranked.c.id, ranked.c.task_name, ranked.c.args)
            .order_by(ranked.c.turn, ranked.c.id)
            .limit(graph_room)
        )
        picked += _fetch(session, fair)
    return picked


def _send(
    session: Session, sender: TaskQueue, rows: list[_Due], epoch: str
) -> tuple[int, str | None]:
    """Send in order until the broker refuses; mark what went out as sent (same transaction)."""
    sent: list[int] = []
    error: str | None = None
    for row_id, name, args in rows:
        try:
            sender.send(name, args)
        except BrokerUnavailableError as exc:
            error = exc.message
            break
        sent.append(row_id)
    if sent:
        session.execute(
            update(OutboxTask)
            .where(OutboxTask.id.in_(sent), OutboxTask.status == OutboxStatus.PENDING)
            .values(
                status=OutboxStatus.SENT,
                broker_epoch=epoch,
                sends=OutboxTask.sends + 1,
                sent_at=func.now(),
                started_at=None,
            )
        )
    return len(sent), error
