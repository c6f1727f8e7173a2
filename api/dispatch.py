"""Routes that ask for background work commit it as outbox rows, then wake the relay."""

from __future__ import annotations

from sqlalchemy.orm import Session

from graphrag.db.outbox import TaskRequest, enqueue
from graphrag.ingest.relay_loop import RelayLoop

__all__ = ["commit_with_task"]


def commit_with_task(session: Session, relay: RelayLoop, task: TaskRequest) -> None:
    """Commit the request's change together with its task row, then let the relay send it now.

    The broker is never called from the request: when it is down the row waits for the relay,
    and the client still gets its answer (202 for uploads).
    """
    enqueue(session, task)
    session.commit()
    relay.kick()
