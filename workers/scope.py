"""A worker process's services, opened once per process and shared by its threads.

`process_scope()` is the one holder of a process: the services `graphrag.services` opens for a
worker (each part on first use, so the relay, the database alone, never waits for a slow Neo4j
connection), over the worker app's settings and its task queue. A forked child builds its own
holder (connection pools and threads do not survive a fork); the threads of one process share
it (a graph worker runs threads sized by the LLM slots): the engine, the driver, the Redis
client, the OpenAI client and the embedder are safe to share, and every task opens its own
session.
"""

from __future__ import annotations

import os
import threading

from graphrag.services import Role, Services, open_services
from graphrag.settings import Settings
from workers.celery_app import app
from workers.collector import tune_collector
from workers.pool import sized_for_threads
from workers.queue import CeleryTaskQueue

__all__ = ["process_scope", "share_among_threads", "warm_up"]

_lock = threading.Lock()
_current: Services | None = None
_threads = 0  # tasks this process runs at once on threads; 0: one at a time (prefork, solo)


def share_among_threads(threads: int) -> None:
    """Size this process's PostgreSQL and Neo4j connection pools for `threads` tasks at once;
    called before the scope opens. A graph task holds a connection of each across its graph
    write, so a pool smaller than the thread count left tasks that had their LLM answer (or
    were about to ask) waiting for a connection while LLM slots stood idle."""
    global _threads
    _threads = threads


def process_scope() -> Services:
    """This process's services, over the worker app's settings; a forked child opens its own."""
    global _current
    with _lock:
        if _current is None or _current.pid != os.getpid():
            settings: Settings = app.conf.graphrag_settings
            sized = sized_for_threads(settings, _threads)
            _current = open_services(sized, Role.WORKER, CeleryTaskQueue(app))
        return _current


def warm_up() -> None:
    """Open this process's connections now (database, Neo4j, schema checks, the slot count),
    so the first task does not pay for it; then tune the process's garbage collector
    (`celery.gc_young_threshold`), even if a service was not up."""
    try:
        process_scope().open()
    finally:
        tune_collector(app.conf.graphrag_settings.celery.gc_young_threshold)
