"""Recall memory: every message of every session in PostgreSQL `recall_memory`, per owner.

A message row keeps its role, text and tool data (tool calls of an assistant turn, the call id
and tool name of a tool result, the entity names a user turn was about). Closing a session
appends a system row whose tool data is `{"event": "session_closed", "report": {...}}`: the
next close of the same session reads only what came after it, and the idle sweep skips it.
Rows of one session get strictly increasing times, so their order is their time order even
when the clock does not move between two writes.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from pydantic import ConfigDict, Field
from sqlalchemy import func, or_, select
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.orm import Session

from graphrag.db.enums import MessageRole
from graphrag.db.models import RecallMemory
from graphrag.memory.clock import Clock, datetime_from_ms, system_clock
from graphrag.memory.records import MemoryOwner, SessionCloseReport
from graphrag.value_model import ValueModel

__all__ = [
    "CLOSE_EVENT",
    "ENTITIES_KEY",
    "LoggedMessage",
    "RecallEntry",
    "append_entries",
    "idle_sessions",
    "last_close_report",
    "mark_closed",
    "record_exchange",
    "session_messages",
]

CLOSE_EVENT = "session_closed"
ENTITIES_KEY = "entities"
_EVENT_KEY = "event"
_REPORT_KEY = "report"
_STEP = timedelta(microseconds=1)  # PostgreSQL's timestamp resolution


class RecallEntry(ValueModel):
    """A message to log: role, text and OpenAI tool data (`tool_calls`, `tool_call_id`, `name`)."""

    role: MessageRole
    content: str = ""
    tool_data: dict[str, Any] = Field(default_factory=dict)


class LoggedMessage(RecallEntry):
    """A logged message with its id, session and time (read from its `RecallMemory` row)."""

    model_config = ConfigDict(frozen=True, from_attributes=True)

    id: uuid.UUID
    session_id: uuid.UUID | None
    created_at: datetime


def _scope(owner: MemoryOwner, session_id: uuid.UUID | None) -> list[Any]:
    where = [RecallMemory.tenant_id == owner.tenant_id, RecallMemory.owner == owner.owner]
    if session_id is None:
        where.append(RecallMemory.session_id.is_(None))
    else:
        where.append(RecallMemory.session_id == session_id)
    return where


def append_entries(
    db: Session,
    owner: MemoryOwner,
    session_id: uuid.UUID | None,
    entries: Sequence[RecallEntry],
    clock: Clock = system_clock,
) -> list[LoggedMessage]:
    """Log `entries` in order (flushed, not committed: the caller's transaction decides)."""
    last = db.execute(
        select(func.max(RecallMemory.created_at)).where(*_scope(owner, session_id))
    ).scalar_one_or_none()
    moment = datetime_from_ms(clock())
    if last is not None and moment <= last:
        moment = last + _STEP
    rows = []
    for offset, entry in enumerate(entries):
        rows.append(
            RecallMemory(
                id=uuid.uuid4(),
                tenant_id=owner.tenant_id,
                owner=owner.owner,
                session_id=session_id,
                role=entry.role,
                content=entry.content,
                tool_data=dict(entry.tool_data),
                created_at=moment + offset * _STEP,
            )
        )
    db.add_all(rows)
    db.flush()
    return [LoggedMessage.model_validate(r) for r in rows]


def record_exchange(
    session: Session,
    owner: MemoryOwner,
    session_id: uuid.UUID,
    user_text: str,
    assistant_text: str,
    entities: list[str],
    *,
    clock: Clock = system_clock,
) -> None:
    """Feed one chat turn to the memory: the user's message and the answer, in recall memory.

    `entities` are the names the turn was about (e.g. the chat's query entities); they are kept
    on the user row and become MemoryEntity nodes, linked to the facts naming them, when the
    session is closed. `session_id` is the chat session's id (a `chat_sessions` row). The rows
    are flushed in the caller's transaction, which commits them.
    """
    names = list(dict.fromkeys(n.strip() for n in entities if n.strip()))
    append_entries(
        session,
        owner,
        session_id,
        [
            RecallEntry(role=MessageRole.USER, content=user_text, tool_data={ENTITIES_KEY: names}),
            RecallEntry(role=MessageRole.ASSISTANT, content=assistant_text),
        ],
        clock,
    )


def _is_close_marker(message: RecallEntry) -> bool:
    return message.role == MessageRole.SYSTEM and message.tool_data.get(_EVENT_KEY) == CLOSE_EVENT


def session_messages(
    db: Session, owner: MemoryOwner, session_id: uuid.UUID, *, since_close: bool
) -> list[LoggedMessage]:
    """The session's messages in order, without close markers; with `since_close`, only those
    logged after the last close."""
    rows = db.scalars(
        select(RecallMemory)
        .where(*_scope(owner, session_id))
        .order_by(RecallMemory.created_at, RecallMemory.id)
    ).all()
    messages = [LoggedMessage.model_validate(r) for r in rows]
    if since_close:
        marks = [i for i, m in enumerate(messages) if _is_close_marker(m)]
        if marks:
            messages = messages[marks[-1] + 1 :]
    return [m for m in messages if not _is_close_marker(m)]


def mark_closed(
    db: Session,
    owner: MemoryOwner,
    session_id: uuid.UUID,
    report: SessionCloseReport,
    clock: Clock = system_clock,
) -> None:
    """Log the close of the session with its report."""
    entry = RecallEntry(
        role=MessageRole.SYSTEM,
        content="session closed",
        tool_data={_EVENT_KEY: CLOSE_EVENT, _REPORT_KEY: report.model_dump(mode="json")},
    )
    append_entries(db, owner, session_id, [entry], clock)


def last_close_report(
    db: Session, owner: MemoryOwner, session_id: uuid.UUID
) -> SessionCloseReport | None:
    """The report of the session's last close, or None if it was never closed."""
    row = db.scalars(
        select(RecallMemory)
        .where(
            *_scope(owner, session_id),
            RecallMemory.role == MessageRole.SYSTEM,
            RecallMemory.tool_data[_EVENT_KEY].astext == CLOSE_EVENT,
        )
        .order_by(RecallMemory.created_at.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    return SessionCloseReport.model_validate(row.tool_data[_REPORT_KEY])


def idle_sessions(db: Session, cutoff: datetime, limit: int) -> list[tuple[MemoryOwner, uuid.UUID]]:
    """Sessions whose last message is older than `cutoff` and is not a close, oldest first."""
    last = (
        select(
            RecallMemory.tenant_id,
            RecallMemory.owner,
            RecallMemory.session_id,
            RecallMemory.created_at,
            RecallMemory.tool_data[_EVENT_KEY].astext.label("event"),
        )
        .where(RecallMemory.session_id.is_not(None))
        .ext(distinct_on(RecallMemory.tenant_id, RecallMemory.owner, RecallMemory.session_id))
        .order_by(
            RecallMemory.tenant_id,
            RecallMemory.owner,
            RecallMemory.session_id,
            RecallMemory.created_at.desc(),
        )
        .subquery()
    )
    rows = db.execute(
        select(last.c.tenant_id, last.c.owner, last.c.session_id)
        .where(
            last.c.created_at < cutoff,
            or_(last.c.event.is_(None), last.c.event != CLOSE_EVENT),
        )
        .order_by(last.c.created_at)
        .limit(limit)
    ).all()
    return [(MemoryOwner(tenant_id=r.tenant_id, owner=r.owner), r.session_id) for r in rows]
