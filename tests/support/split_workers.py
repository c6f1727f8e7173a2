"""A docparse worker (prefork) and a graph worker (threads) of their own, as production runs
them, on a Redis database, queue names and a PostgreSQL database of their own: their relays send
only the test's outbox rows, and no other worker takes the test's tasks."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

import redis
from neo4j import Driver

from graphrag.graph.factory import build_graph_store
from graphrag.ingest.context import IngestContext
from graphrag.llm.concurrency import background_slots_key
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.isolated_worker import core_context, on_own_queues, on_redis_db, own_database
from tests.support.services import data_dir
from tests.support.worker import WorkerProcess

__all__ = ["SPLIT_REDIS_DB", "free_port", "split_workers"]

SPLIT_REDIS_DB = 2  # outside the range the session fixtures pick from; the queues are the test's


def free_port() -> int:
    """A loopback TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def split_workers(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    neo4j_driver: Driver,
    llm: ScriptedLlmServer,
    name: str,
    threads: int = 0,
    graph_env: dict[str, str] | None = None,
) -> Iterator[tuple[IngestContext, int]]:
    """Both workers started against `llm`; yields the core context and the graph worker's
    metrics port. The graph worker's threads are its own choice (the LLM's slots) unless
    `threads` is given."""
    from workers.celery_app import create_celery

    moved, env = on_own_queues(*on_redis_db(settings, settings_env, SPLIT_REDIS_DB))
    with own_database(services_env["DATABASE_URL"], moved, env) as (own_settings, env, sessions):
        env = {
            **env,
            "LLM_BASE_URL": llm.openai_base_url,
            "EMBEDDING_BASE_URL": llm.openai_base_url,
        }
        celery = create_celery(own_settings)
        celery.control.purge()
        # Leases left by an interrupted earlier run would hold slots until they expire.
        redis.Redis.from_url(own_settings.redis.url).delete(background_slots_key(own_settings.llm))
        ctx = core_context(own_settings, sessions, build_graph_store(own_settings, neo4j_driver))
        logs = data_dir() / "test-logs"
        port = free_port()
        queues = own_settings.celery
        docparse = WorkerProcess(
            env, logs / f"worker-{name}-docparse.log", 1, [queues.docparse_queue]
        )
        graph_worker = WorkerProcess(
            {**env, "METRICS_WORKER_PORT": str(port), **(graph_env or {})},
            logs / f"worker-{name}-graph.log",
            threads,
            queues=[queues.graph_queue],
        )
        started: list[WorkerProcess] = []
        try:
            for proc in (docparse, graph_worker):
                proc.start(celery)
                started.append(proc)
            yield ctx, port
        finally:
            for proc in started:
                proc.stop()
