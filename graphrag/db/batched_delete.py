"""Deleting many rows as a run of small committed transactions.

One DELETE of a whole base's chunks holds its locks, its WAL and its cascades for as long as the
table takes to walk, and past the statement timeout it rolls everything back: nothing is ever
gained. Batches of a bounded size each commit what they removed, so a delete cut short (a
timeout, a lost worker) has shrunk the work left, and running it again continues from there.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Table, delete, select
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope

__all__ = ["delete_in_batches"]


def delete_in_batches(
    sessions: sessionmaker[Session],
    table: Table,
    where: ColumnElement[bool],
    batch_rows: int,
) -> int:
    """Delete the rows of `table` (keyed by `id`) matching `where`, at most `batch_rows` per
    committed transaction, until none is left; how many were deleted."""
    batch = select(table.c.id).where(where).limit(batch_rows).scalar_subquery()
    statement = delete(table).where(table.c.id.in_(batch))
    total = 0
    while True:
        with session_scope(sessions) as session:
            deleted = int(session.execute(statement).rowcount)  # type: ignore[attr-defined]
        total += deleted
        if deleted < batch_rows:
            return total
