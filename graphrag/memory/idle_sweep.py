"""The idle sweep: sessions without a message for `idle_close_s` are due to be closed."""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.outbox import close_memory_session, enqueue
from graphrag.memory.clock import MS_PER_S, Clock, datetime_from_ms, system_clock
from graphrag.memory.models import MemoryOwner
from graphrag.memory.recall_log import idle_sessions
from graphrag.settings import MemorySettings

__all__ = ["queue_idle_closes", "sessions_due_for_close"]


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
        enqueue(db, *(close_memory_session(o.tenant_id, o.owner, s) for o, s in due))
    return len(due)
