"""A docparse worker (prefork) and a graph worker (threads) of their own, as production runs
them, on a Redis database, queue names and a PostgreSQL database of their own: their relays send
only the test's outbox rows, and no other worker takes the test's tasks."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import redis
from celery import Celery
from neo4j import Driver

from graphrag.graph.factory import build_graph_store
from graphrag.ingest.context import IngestContext
from graphrag.llm.concurrency import background_slots_key
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.isolated_worker import core_context, on_own_queues, on_redis_db, own_database
from tests.support.services import ROOT, data_dir, worker_environment
from tests.support.worker import READY_TIMEOUT_S, WorkerProcess

__all__ = ["SPLIT_REDIS_DB", "fast_layout", "free_port", "split_workers"]

SPLIT_REDIS_DB = 2  # outside the range the session fixtures pick from; the queues are the test's
LAYOUT_WORKERS = 2  # the graph worker and the worker of every other queue


def free_port() -> int:
    """A loopback TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _isolated(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    neo4j_driver: Driver,
    llm: ScriptedLlmServer,
) -> Iterator[tuple[IngestContext, dict[str, str], Celery]]:
    """The test's own broker database, queues and PostgreSQL database, against `llm`: the core
    context, the workers' environment and a Celery client of theirs."""
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
        yield (
            core_context(own_settings, sessions, build_graph_store(own_settings, neo4j_driver)),
            env,
            celery,
        )


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
    with _isolated(settings, settings_env, services_env, neo4j_driver, llm) as (ctx, env, celery):
        logs = data_dir() / "test-logs"
        port = free_port()
        queues = ctx.settings.celery
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


@contextmanager
def fast_layout(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    neo4j_driver: Driver,
    llm: ScriptedLlmServer,
) -> Iterator[tuple[IngestContext, Celery, subprocess.Popen[bytes]]]:
    """`graphrag worker` with no options, against `llm`, once both of its workers answer a
    ping; yields the core context, the Celery client and the command's process."""
    with _isolated(settings, settings_env, services_env, neo4j_driver, llm) as (ctx, env, celery):
        log = (data_dir() / "test-logs" / "worker-fast-layout.log").open("ab")
        env = {**worker_environment(env), "METRICS_WORKER_PORT": str(free_port())}
        argv = [sys.executable, "-m", "cli.main", "worker"]
        proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            deadline = time.monotonic() + READY_TIMEOUT_S
            while len(_answering(celery)) < LAYOUT_WORKERS:
                assert proc.poll() is None, "graphrag worker exited early"
                assert time.monotonic() < deadline, "the fast layout's workers never answered"
            yield ctx, celery, proc
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=READY_TIMEOUT_S)
            log.close()


def _answering(celery: Celery) -> list[str]:
    return [name for reply in celery.control.ping(timeout=1.0) for name in reply]
