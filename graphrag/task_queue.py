"""The port through which the outbox relay hands tasks to the broker. Workers provide Celery's.

Producers never call it: they write `graphrag.db.outbox` rows in their own transaction, and the
relay sends those rows through this port.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["TaskQueue"]


class TaskQueue(Protocol):
    """Send one task by name, ids only; raise `BrokerUnavailableError` if the broker refuses."""

    def send(self, task_name: str, args: Sequence[object]) -> None: ...
