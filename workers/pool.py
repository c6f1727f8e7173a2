"""Which Celery pool a worker runs, and how wide.

Graph extraction waits on the LLM server, not on the CPU: a worker of the `graph` queue alone
runs threads, `celery.graph_threads_per_slot` per LLM slot and at most
`celery.graph_threads_over_slots` more than the slots (the slot limit keeps the calls in flight
at the slot count; the extra threads do their database and graph writes meanwhile, and past a
few of them they only contend for the same cores and locks). Parsing and embedding are CPU work
and keep processes.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Literal

from graphrag.errors import GraphragError
from graphrag.llm.server_info import slot_limit
from graphrag.settings import Settings

__all__ = [
    "PoolChoice",
    "choose_pool",
    "graph_threads",
    "runs_tasks_itself",
    "sized_for_threads",
    "warm_up_on_start",
]

log = logging.getLogger(__name__)

PoolChoice = Literal["auto", "threads", "prefork"]


def choose_pool(
    settings: Settings, queues: list[str], pool: PoolChoice, concurrency: int
) -> tuple[str, int]:
    """(pool name, concurrency; 0 = Celery's default, the CPU count)."""
    graph_only = queues == [settings.celery.graph_queue]
    if pool == "auto":
        pool = settings.celery.graph_pool if graph_only else "prefork"
    if pool == "threads" and not concurrency:
        concurrency = graph_threads(settings, slot_limit(settings.llm))
    return pool, concurrency


def graph_threads(settings: Settings, slots: int) -> int:
    """The threads a graph worker runs for `slots` LLM slots: enough for every slot to be in use
    while other tasks start, write and settle, and no more than the settings' margin beyond."""
    c = settings.celery
    return min(slots * c.graph_threads_per_slot, slots + c.graph_threads_over_slots)


def runs_tasks_itself(worker: Any) -> bool:
    """Whether the worker (a `worker_ready` sender) runs tasks in its own process: a thread or
    solo pool does, a prefork worker leaves them to its children."""
    return "prefork" not in type(worker.pool).__module__


def sized_for_threads(settings: Settings, threads: int) -> Settings:
    """`settings` with PostgreSQL and Neo4j connection pools of at least `threads` connections
    (0: as configured): a graph task holds one of each across its graph write."""
    if not threads:
        return settings
    db, neo4j = settings.database, settings.neo4j
    pool_size = max(db.pool_size, threads)
    bolt_size = max(neo4j.max_connection_pool_size, threads)
    return settings.model_copy(
        update={
            "database": db.model_copy(update={"pool_size": pool_size}),
            "neo4j": neo4j.model_copy(update={"max_connection_pool_size": bolt_size}),
        }
    )


def warm_up_on_start(pool: str, concurrency: int) -> None:
    """Open the worker's shared resources before its first task: a threads worker once it is
    ready; each prefork child on a thread of its own right after it starts, since Celery gives a
    new child only seconds to report that it is up, less than a slow Neo4j connection may take
    (a task that comes first waits for the opening under way instead of starting another)."""
    from celery.signals import worker_process_init, worker_ready

    from workers.scope import share_among_threads, warm_up

    if pool == "threads":
        share_among_threads(concurrency)
        worker_ready.connect(lambda **_: warm_up(), weak=False)
        return

    def _open() -> None:
        try:
            warm_up()
        except GraphragError as exc:  # a service not up yet: the first task opens it again
            log.warning("worker resources not opened ahead: %s", exc)

    def _in_background(**_: object) -> None:
        threading.Thread(target=_open, name="scope-warm-up", daemon=True).start()

    worker_process_init.connect(_in_background, weak=False)
