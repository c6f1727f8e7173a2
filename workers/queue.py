"""The Celery side of the core's TaskQueue port: tasks are sent by name, ids only."""

from __future__ import annotations

from collections.abc import Sequence

import redis
from celery import Celery
from kombu.exceptions import KombuError

from graphrag.errors import BrokerUnavailableError

__all__ = ["CeleryTaskQueue"]


class CeleryTaskQueue:
    """Send by task name, so producers (the relay in the API, CLI, workers) import no task."""

    def __init__(self, app: Celery) -> None:
        self.app = app

    def send(self, task_name: str, args: Sequence[object]) -> None:
        try:
            # No publish retries here: the row stays due and the next relay pass tries again.
            # Nobody reads the result (the outbox row is the task's state): no result listener.
            self.app.send_task(task_name, args=list(args), retry=False, ignore_result=True)
        except (KombuError, redis.RedisError, OSError) as exc:
            raise BrokerUnavailableError(f"the broker refused {task_name}: {exc}") from exc
