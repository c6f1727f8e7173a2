"""Which workers are alive, from heartbeats they keep in Redis.

Each worker process (the Celery main process) writes one key every `celery.heartbeat_interval_s`
holding its name, queues and the time, with a time to live of `celery.heartbeat_ttl_s`: a worker
that dies or hangs stops renewing it and drops out of `/api/v1/system` within that time, one that
shuts down cleanly removes it at once. Reading them is a scan of a few keys, so the API never
waits on a broadcast to the workers.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from typing import Literal

import redis
from pydantic import BaseModel, ValidationError

from graphrag.settings import CelerySettings

__all__ = [
    "HEARTBEAT_PREFIX",
    "HeartbeatLoop",
    "WorkerBeat",
    "WorkerLiveness",
    "read_workers",
    "remove_heartbeat",
    "write_heartbeat",
]

log = logging.getLogger(__name__)

HEARTBEAT_PREFIX = "graphrag:worker-heartbeat:"


class WorkerBeat(BaseModel):
    """One worker as its last heartbeat described it."""

    name: str
    queues: list[str]
    pid: int
    pool: str
    beat_at: float  # seconds since the epoch
    age_s: float = 0.0  # filled in when read


class WorkerLiveness(BaseModel):
    """The live workers, and the configured queues that none of them consumes."""

    status: Literal["ok", "none", "down"]  # none: no live worker; down: Redis unreadable
    workers: list[WorkerBeat]
    queues_without_worker: list[str]
    detail: str | None = None


def _key(name: str) -> str:
    return HEARTBEAT_PREFIX + name


def write_heartbeat(client: redis.Redis[bytes], beat: WorkerBeat, ttl_s: float) -> None:
    """Renew this worker's key for `ttl_s` seconds."""
    client.set(_key(beat.name), beat.model_dump_json(exclude={"age_s"}), px=int(ttl_s * 1000))


def remove_heartbeat(client: redis.Redis[bytes], name: str) -> None:
    """A clean shutdown: the worker leaves the list at once."""
    client.delete(_key(name))


def read_workers(
    client: redis.Redis[bytes], settings: CelerySettings, queues: Sequence[str]
) -> WorkerLiveness:
    """The workers whose heartbeat is younger than `heartbeat_ttl_s`; Redis errors reported."""
    now = time.time()
    try:
        keys = list(client.scan_iter(match=HEARTBEAT_PREFIX + "*"))
        raw = client.mget(keys) if keys else []
    except redis.RedisError as exc:
        return WorkerLiveness(
            status="down", workers=[], queues_without_worker=list(queues), detail=str(exc)
        )
    workers: list[WorkerBeat] = []
    for value in raw:
        if value is None:  # expired between the scan and the read
            continue
        try:
            beat = WorkerBeat.model_validate(json.loads(value))
        except (ValueError, ValidationError):
            continue
        age = max(now - beat.beat_at, 0.0)
        if age <= settings.heartbeat_ttl_s:
            workers.append(beat.model_copy(update={"age_s": round(age, 3)}))
    workers.sort(key=lambda w: w.name)
    served = {q for w in workers for q in w.queues}
    return WorkerLiveness(
        status="ok" if workers else "none",
        workers=workers,
        queues_without_worker=[q for q in queues if q not in served],
    )


class HeartbeatLoop:
    """Writes a worker's heartbeat on a daemon thread until `stop()`, which removes it."""

    def __init__(
        self, client: redis.Redis[bytes], settings: CelerySettings, beat: WorkerBeat
    ) -> None:
        self._client = client
        self._settings = settings
        self._beat = beat
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="worker-heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(self._settings.heartbeat_interval_s)
        try:
            remove_heartbeat(self._client, self._beat.name)
        except redis.RedisError as exc:
            log.info("heartbeat of %s not removed (%s); it expires", self._beat.name, exc)

    def _run(self) -> None:
        while not self._stopping.is_set():
            beat = self._beat.model_copy(update={"beat_at": time.time()})
            try:
                write_heartbeat(self._client, beat, self._settings.heartbeat_ttl_s)
            except redis.RedisError as exc:
                # The broker is down: the worker cannot take tasks either, so it shows as gone.
                log.warning("worker heartbeat not written: %s", exc)
            self._stopping.wait(self._settings.heartbeat_interval_s)
