"""Routes that ask for background work commit it, then wake the relay."""

from __future__ import annotations

from sqlalchemy.orm import Session

from graphrag.outbox.relay_loop import RelayLoop

__all__ = ["commit_and_kick"]


def commit_and_kick(session: Session, relay: RelayLoop) -> None:
    """Commit the request's change, whose core function wrote its task rows in the same
    transaction, then let the relay send them now.

    The broker is never called from the request: when it is down the rows wait for the relay,
    and the client still gets its answer (202 for uploads).
    """
    session.commit()
    relay.kick()
