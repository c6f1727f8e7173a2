"""The worker's heartbeat in Redis (see `graphrag.worker_liveness`), from ready to shutdown."""

from __future__ import annotations

import os
import threading
from typing import Any

import redis
from celery import signals

from graphrag.worker_liveness import HeartbeatLoop, WorkerBeat
from workers.celery_app import app

_settings = app.conf.graphrag_settings
_lock = threading.Lock()
_loops: list[HeartbeatLoop] = []


@signals.worker_ready.connect
def _start(sender: Any, **_: Any) -> None:
    consume_from = getattr(sender.app.amqp.queues, "consume_from", None) or {}
    beat = WorkerBeat(
        name=str(sender.hostname),
        queues=sorted(consume_from),
        pid=os.getpid(),
        pool=type(sender.pool).__module__.rsplit(".", 1)[-1],
        beat_at=0.0,
    )
    loop = HeartbeatLoop(redis.Redis.from_url(_settings.redis.url), _settings.celery, beat)
    loop.start()
    with _lock:
        _loops.append(loop)


@signals.worker_shutdown.connect
def _stop(**_: Any) -> None:
    with _lock:
        loops, _loops[:] = list(_loops), []
    for loop in loops:
        loop.stop()
