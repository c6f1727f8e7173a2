"""Queueing the close of sessions: one on request, and by the idle sweep those without a
message for `idle_close_s`. The close task is written into the outbox in the caller's
transaction; the worker closes the session."""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.outbox import TaskRequest, close_memory_session, enqueue
from graphrag.memory.clock import MS_PER_S, Clock, datetime_from_ms, system_clock
from graphrag.memory.recall_log import idle_sessions
from graphrag.memory.records import MemoryOwner
from graphrag.settings import MemorySettings

__all__ = ["queue_idle_closes", "request_close", "sessions_due_for_close"]


def _close(owner: MemoryOwner, session_id: uuid.UUID) -> TaskRequest:
    return close_memory_session(owner.tenant_id, owner.owner, session_id)


def request_close(db: Session, owner: MemoryOwner, session_id: uuid.UUID) -> None:
    """Queue the close of the owner's session (the caller commits, then wakes the relay)."""
    enqueue(db, _close(owner, session_id))


def sessions_due_for_close(
    db: Session, settings: MemorySettings, clock: Clock = system_clock
) -> list[tuple[MemoryOwner, uuid.UUID]]:
    """Up to `sweep_batch` idle, not yet closed sessions, the longest idle first."""
    cutoff = datetime_from_ms(clock() - settings.idle_close_s * MS_PER_S)
    return idle_sessions(db, cutoff, settings.sweep_batch)


def queue_idle_closes(
    sessions: sessionmaker[Session], settings: MemorySettings, clock: Clock = system_clock
) -> int:
    """Write a close task to the outbox for each session due; how many were due."""
    with session_scope(sessions) as db:
        due = sessions_due_for_close(db, settings, clock)
        enqueue(db, *(_close(owner, session_id) for owner, session_id in due))
    return len(due)
