"""The Celery side of the core's TaskQueue port: tasks are sent by name, ids only."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import redis
from celery import Celery
from kombu.exceptions import KombuError

from graphrag.errors import BrokerUnavailableError

__all__ = ["BROKER_EPOCH_KEY", "CeleryTaskQueue", "purge_broker"]

# A key in the broker's own Redis database: gone with the messages when the broker loses them.
BROKER_EPOCH_KEY = "graphrag:outbox:broker-epoch"


class CeleryTaskQueue:
    """Send by task name, so producers (the relay in the API, CLI, workers) import no task."""

    def __init__(self, app: Celery) -> None:
        self.app = app
        self._redis: redis.Redis[bytes] | None = None

    def _client(self) -> redis.Redis[bytes]:
        if self._redis is None:
            self._redis = redis.Redis.from_url(str(self.app.conf.broker_url))
        return self._redis

    def broker_epoch(self) -> str:
        candidate = uuid.uuid4().hex
        try:
            if self._client().set(BROKER_EPOCH_KEY, candidate, nx=True):
                self._declare_queues()
            value = self._client().get(BROKER_EPOCH_KEY)
        except (KombuError, redis.RedisError, OSError) as exc:
            raise BrokerUnavailableError(f"the broker did not answer: {exc}") from exc
        return value.decode() if value else candidate

    def _declare_queues(self) -> None:
        # A new epoch is an empty broker: its queue bindings went too, and a message published
        # before a worker declares them again would be dropped for want of a route.
        with self.app.connection_for_write() as connection:
            channel = connection.default_channel
            for queue in self.app.amqp.queues.values():
                queue.bind(channel).declare()

    def send(self, task_name: str, args: Sequence[object]) -> None:
        try:
            # No publish retries here: the row stays due and the next relay pass tries again.
            # Nobody reads the result (the outbox row is the task's state): no result listener.
            self.app.send_task(task_name, args=list(args), retry=False, ignore_result=True)
        except (KombuError, redis.RedisError, OSError) as exc:
            raise BrokerUnavailableError(f"the broker refused {task_name}: {exc}") from exc


def purge_broker(app: Celery) -> None:
    """Drop every queued message. The epoch goes with them, so the relays send the outbox rows
    of the dropped tasks again instead of waiting out their visibility timeout."""
    app.control.purge()
    redis.Redis.from_url(str(app.conf.broker_url)).delete(BROKER_EPOCH_KEY)
