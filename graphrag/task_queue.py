"""The port through which the outbox relay hands tasks to the broker. Workers provide Celery's.

Producers never call it: they write `graphrag.db.outbox` rows in their own transaction, and the
relay sends those rows through this port.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["TaskQueue"]


class TaskQueue(Protocol):
    """Send tasks by name, ids only. Both methods raise `BrokerUnavailableError` when the broker
    cannot be reached or refuses."""

    def broker_epoch(self) -> str:
        """An id of what the broker holds now: it changes when the broker lost its messages
        (restarted empty, flushed, failed over), so every message sent before is known lost."""
        ...

    def send_batch(self, tasks: Sequence[tuple[str, Sequence[object]]]) -> None:
        """Send (task name, args) pairs, in order, in one exchange with the broker. On an error
        any of them may have gone out: the caller sends them all again later (a task that
        arrives twice does its work once)."""
        ...
