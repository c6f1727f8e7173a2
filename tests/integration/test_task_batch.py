"""The relay's side of the broker against a real Redis of the test's own: every task of a batch
lands on its queue, in order, as Celery messages; a broker that is gone raises the port's error;
the broker's epoch stands until the broker loses its keys. A consumer's side: a message held
unacknowledged leaves a copy in Redis only with the ack emulation on, and goes back to its queue
when the consumer's channel closes either way."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from kombu import Queue
from kombu.message import Message

from graphrag.errors import BrokerUnavailableError
from graphrag.settings import Settings
from tests.support.own_redis import OwnRedis
from workers.queue import CeleryTaskQueue, sender_queue

pytestmark = pytest.mark.integration


@pytest.fixture()
def broker(tmp_path: Path) -> Iterator[OwnRedis]:
    own = OwnRedis(tmp_path / "redis")
    own.start()
    try:
        yield own
    finally:
        own.stop()


def _on_broker(settings: Settings, broker: OwnRedis, *, ack_emulation: bool) -> Settings:
    redis_settings = settings.redis.model_copy(update={"url": broker.url})
    celery = settings.celery.model_copy(update={"broker_ack_emulation": ack_emulation})
    return settings.model_copy(update={"redis": redis_settings, "celery": celery})


@pytest.fixture()
def sender(broker: OwnRedis, settings: Settings) -> Iterator[CeleryTaskQueue]:
    on_broker = _on_broker(settings, broker, ack_emulation=settings.celery.broker_ack_emulation)
    queue = sender_queue(on_broker)
    try:
        yield queue
    finally:
        queue.close()


def _queued(url: str, queue: str) -> list[tuple[str, list[object]]]:
    """(task name, args) of the messages waiting on `queue`, oldest first (consumers pop the
    list's tail)."""
    with redis.Redis.from_url(url) as client:
        raws = client.lrange(queue, 0, -1)
    out = []
    for raw in reversed(raws):
        message = json.loads(raw)
        args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        out.append((message["headers"]["task"], args))
    return out


def test_a_batch_lands_on_its_queues_in_order(
    broker: OwnRedis, sender: CeleryTaskQueue, settings: Settings
) -> None:
    docs = [str(uuid.uuid4()) for _ in range(3)]
    chunk = str(uuid.uuid4())
    tasks: list[tuple[str, list[object]]] = [
        ("document.process", [docs[0], 1]),
        ("graph.extract_chunk", [docs[1], 2, chunk]),
        ("document.process", [docs[2], 1]),
    ]
    sender.send_batch(tasks)
    assert _queued(broker.url, settings.celery.docparse_queue) == [tasks[0], tasks[2]]
    assert _queued(broker.url, settings.celery.graph_queue) == [tasks[1]]


def test_a_broker_that_is_gone_raises_the_ports_error(
    broker: OwnRedis, sender: CeleryTaskQueue
) -> None:
    sender.send_batch([("document.process", [str(uuid.uuid4()), 1])])
    broker.lose()
    with pytest.raises(BrokerUnavailableError, match="refused"):
        sender.send_batch([("document.process", [str(uuid.uuid4()), 1])])


def test_the_epoch_stands_until_the_broker_loses_its_keys(
    broker: OwnRedis, sender: CeleryTaskQueue
) -> None:
    first = sender.broker_epoch()
    assert sender.broker_epoch() == first
    broker.lose()
    broker.start()
    second = sender.broker_epoch()
    assert second != first
    assert sender.broker_epoch() == second


# kombu's names for the copies its ack emulation keeps (a hash of messages, their delivery times)
_COPIES = ("unacked", "unacked_index")


@pytest.mark.parametrize("ack_emulation", [False, True])
def test_a_held_message_is_copied_only_with_the_ack_emulation_and_goes_back_on_close(
    broker: OwnRedis, settings: Settings, ack_emulation: bool
) -> None:
    queue = sender_queue(_on_broker(settings, broker, ack_emulation=ack_emulation))
    graph = settings.celery.graph_queue
    held: list[Message] = []
    client = redis.Redis.from_url(broker.url)
    try:
        queue.send_batch([("graph.extract_chunk", [str(uuid.uuid4()), 1, str(uuid.uuid4())])])
        with (
            queue.app.connection_for_read() as connection,
            connection.Consumer([Queue(graph)], accept=["json"], on_message=held.append),
        ):
            connection.drain_events(timeout=5)
            assert len(held) == 1
            assert client.llen(graph) == 0
            copies = sum(client.exists(key) for key in _COPIES)
            assert copies == (len(_COPIES) if ack_emulation else 0)
        # Closed without an ack: the message waits on its queue again, and no copy is left.
        assert client.llen(graph) == 1
        assert sum(client.exists(key) for key in _COPIES) == 0
    finally:
        client.close()
        queue.close()
