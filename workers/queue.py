"""The Celery side of the core's TaskQueue port: tasks are sent by name, ids only.

Producers (the API, the CLI) send through `sender_queue`: a Celery client with the broker and
the routes only. It imports no task module and builds nothing at import; the worker's app
(`workers.celery_app`) shares the same routing through `routing_conf`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import redis
from celery import Celery
from kombu import Queue
from kombu.exceptions import KombuError

from graphrag.errors import BrokerUnavailableError
from graphrag.settings import Settings

__all__ = ["BROKER_EPOCH_KEY", "CeleryTaskQueue", "purge_broker", "routing_conf", "sender_queue"]

# A key in the broker's own Redis database: gone with the messages when the broker loses them.
BROKER_EPOCH_KEY = "graphrag:outbox:broker-epoch"


def routing_conf(settings: Settings) -> dict[str, Any]:
    """What a producer and a worker must agree on: JSON only, the queues, a task's queue by name,
    and how long Redis waits before it redelivers an unacknowledged message."""
    c = settings.celery
    return {
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        # The outbox (graphrag/outbox/relay.py) sends lost work again: Redis's own copy of each
        # held message is optional. With it, Redis redelivers a message left unacknowledged
        # past a timeout set above every task's time limit (and retry countdown), so a running
        # task is not delivered twice.
        "broker_transport_options": {
            "ack_emulation": c.broker_ack_emulation,
            "visibility_timeout": c.broker_visibility_timeout_s,
        },
        "task_default_queue": c.default_queue,
        "task_queues": [Queue(name) for name in c.queues],
        "task_routes": {
            "document.*": {"queue": c.docparse_queue},
            "graph.*": {"queue": c.graph_queue},
            "memory.*": {"queue": c.memory_queue},
            "eval.*": {"queue": c.eval_queue},
        },
        "broker_connection_retry_on_startup": True,
        "timezone": "UTC",
    }


def sender_queue(settings: Settings) -> CeleryTaskQueue:
    """A send-only task queue: a Celery client with the broker and the routes, no task, no result
    backend (nobody reads results: the outbox row is the task's state)."""
    sender = Celery("graphrag-sender", broker=settings.redis.url, set_as_current=False)
    sender.conf.update(routing_conf(settings))
    return CeleryTaskQueue(sender)


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
            # One round trip while the epoch stands (every relay pass asks).
            value = self._client().get(BROKER_EPOCH_KEY)
            if value is None:
                if self._client().set(BROKER_EPOCH_KEY, candidate, nx=True):
                    self._declare_queues()
                value = self._client().get(BROKER_EPOCH_KEY)
        except (KombuError, redis.RedisError, OSError) as exc:
            raise BrokerUnavailableError(f"the broker did not answer: {exc}") from exc
        return value.decode() if value else candidate

    def close(self) -> None:
        """Give back the broker connections (the producers' pool, the epoch's client)."""
        self.app.close()
        if self._redis is not None:
            self._redis.close()
            self._redis = None

    def _declare_queues(self) -> None:
        # A new epoch is an empty broker: its queue bindings went too, and a message published
        # before a worker declares them again would be dropped for want of a route.
        with self.app.connection_for_write() as connection:
            channel = connection.default_channel
            for queue in self.app.amqp.queues.values():
                queue.bind(channel).declare()

    def send_batch(self, tasks: Sequence[tuple[str, Sequence[object]]]) -> None:
        try:
            # One Redis pipeline for the whole batch (kombu's producer batch): a message sent on
            # its own made a Redis client of its own, most of a relay pass's CPU.
            # No publish retries here: the rows stay due and the next relay pass tries again.
            # Nobody reads the result (the outbox row is the task's state): no result listener.
            with self.app.producer_or_acquire() as producer, producer.batch():
                for task_name, args in tasks:
                    self.app.send_task(
                        task_name,
                        args=list(args),
                        retry=False,
                        ignore_result=True,
                        producer=producer,
                    )
        except (KombuError, redis.RedisError, OSError) as exc:
            raise BrokerUnavailableError(f"the broker refused the tasks: {exc}") from exc


def purge_broker(app: Celery) -> None:
    """Drop every queued message. The epoch goes with them, so the relays send the outbox rows
    of the dropped tasks again instead of waiting out their visibility timeout."""
    app.control.purge()
    redis.Redis.from_url(str(app.conf.broker_url)).delete(BROKER_EPOCH_KEY)
