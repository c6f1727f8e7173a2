"""Which workers are alive, from heartbeats they keep in Redis.

Each worker process (the Celery main process) writes one key every `celery.heartbeat_interval_s`
holding its name, queues and the time, with a time to live of `celery.heartbeat_ttl_s`: a worker
that dies or hangs stops renewing it and drops out of `/api/v1/system` within that time, one that
shuts down cleanly removes it at once. Reading them is a scan of a few keys, so the API never
waits on a broadcast to the workers.

Workers are keyed by their Celery node name. Two live processes with one name would overwrite
each other's key and one of them would vanish from the list, so each write reads the value it
replaces: a value this process did not write means another one beats under the same name; its
pid goes into the beat (`name_shared_with`) and `/api/v1/system` lists the name under
`shared_names`.
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
    name_shared_with: list[int] = []  # pids of other processes seen beating under this name
    age_s: float = 0.0  # filled in when read


class WorkerLiveness(BaseModel):
    """The live workers, and the configured queues that none of them consumes."""

    status: Literal["ok", "none", "down"]  # none: no live worker; down: Redis unreadable
    workers: list[WorkerBeat]
    queues_without_worker: list[str]
    shared_names: list[str] = []  # node names that more than one live process uses
    detail: str | None = None


def _key(name: str) -> str:
    return HEARTBEAT_PREFIX + name


def write_heartbeat(client: redis.Redis[bytes], beat: WorkerBeat, ttl_s: float) -> bytes | None:
    """Renew this worker's key for `ttl_s` seconds; returns the value it replaced (None: none)."""
    previous = client.set(_key(beat.name), _encode(beat), px=int(ttl_s * 1000), get=True)
    return previous if isinstance(previous, bytes) else None


def _encode(beat: WorkerBeat) -> bytes:
    return beat.model_dump_json(exclude={"age_s"}).encode()


def _other_pid(previous: bytes | None, written: bytes | None) -> int | None:
    """The pid of the process that wrote `previous` if not this one (whose last value was
    `written`); None when the key held this process's own beat, or nothing."""
    if previous is None or written is None or previous == written:
        return None
    try:
        return WorkerBeat.model_validate(json.loads(previous)).pid
    except (ValueError, ValidationError):
        return None


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
        shared_names=[w.name for w in workers if w.name_shared_with],
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
        written: bytes | None = None  # this process's last value, to tell another's apart
        sharers: list[int] = []
        while not self._stopping.is_set():
            beat = self._beat.model_copy(
                update={"beat_at": time.time(), "name_shared_with": sharers}
            )
            try:
                previous = write_heartbeat(self._client, beat, self._settings.heartbeat_ttl_s)
            except redis.RedisError as exc:
                # The broker is down: the worker cannot take tasks either, so it shows as gone.
                log.warning("worker heartbeat not written: %s", exc)
                written = None
            else:
                other = _other_pid(previous, written)
                if other is not None and other not in sharers:
                    log.warning(
                        "another process (pid %d) beats as worker %s: give each worker its own "
                        "--name",
                        other,
                        self._beat.name,
                    )
                sharers = [other] if other is not None else []
                written = _encode(beat)
            self._stopping.wait(self._settings.heartbeat_interval_s)
