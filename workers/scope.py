"""A worker process's resources, built once per process and shared by its threads.

`process_scope()` is the one holder of a process: the settings, the one SQLAlchemy engine (its
session factory), the sync Neo4j driver, the ingest and graph contexts, the memory context and
the outbox relay loop. Each part opens on first use, under a lock of its own, so the relay (the
database alone) never waits for a slow Neo4j connection. A forked child builds its own holder
(connection pools and threads do not survive a fork); the threads of one process share it (a
graph worker runs threads sized by the LLM slots): the engine, the driver, the Redis client,
the OpenAI client and the embedder are safe to share, and every task opens its own session.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import redis
from celery import Celery
from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import make_engine, make_session_factory
from graphrag.graph.factory import build_graph_store
from graphrag.graph.neo4j_client import connect_driver
from graphrag.ingest.context import IngestContext
from graphrag.ingest.graph.chunk_extraction import GraphContext
from graphrag.ingest.storage import FileStorage
from graphrag.llm.client import LlmClient
from graphrag.llm.concurrency import background_limiter
from graphrag.llm.server_info import slot_limit
from graphrag.memory.context import MemoryContext, open_memory_context
from graphrag.metrics import llm_metrics
from graphrag.outbox.relay_loop import RelayLoop
from graphrag.search.embeddings import build_embedder
from graphrag.settings import Settings
from workers.celery_app import app
from workers.pool import sized_for_threads
from workers.queue import CeleryTaskQueue

__all__ = ["ProcessScope", "process_scope", "share_among_threads", "warm_up"]

_T = TypeVar("_T")


class _Once(Generic[_T]):
    """A value built on first use, once: a thread that comes while it is built waits for it."""

    def __init__(self, build: Callable[[], _T]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._value: _T | None = None

    def get(self) -> _T:
        with self._lock:
            if self._value is None:
                self._value = self._build()
            return self._value


@dataclass(frozen=True)
class _Services:
    ingest: IngestContext
    graph: GraphContext
    driver: Driver | None  # the process's one Neo4j driver; None when the graph is off


class ProcessScope:
    """One process's resources (see the module); each property opens its part on first use."""

    def __init__(self, settings: Settings, app: Celery) -> None:
        self.settings = settings
        self.pid = os.getpid()
        self._app = app
        self._sessions = _Once(lambda: make_session_factory(make_engine(settings)))
        self._services = _Once(self._open_services)
        self._memory = _Once(self._open_memory)
        self._relay = _Once(self._start_relay)

    @property
    def sessions(self) -> sessionmaker[Session]:
        """The session factory of the process's one engine."""
        return self._sessions.get()

    @property
    def ingest(self) -> IngestContext:
        """What document processing and purges use."""
        return self._services.get().ingest

    @property
    def graph(self) -> GraphContext:
        """What graph extraction uses."""
        return self._services.get().graph

    @property
    def memory(self) -> MemoryContext:
        """The memory (schema ensured once); without Neo4j its archive raises
        ArchivalMemoryDisabledError."""
        return self._memory.get()

    @property
    def relay(self) -> RelayLoop:
        """The process's outbox relay, running from its first use."""
        return self._relay.get()

    def open(self) -> None:
        """Open the database, Neo4j and LLM side now (what a task's first use would open)."""
        self._services.get()

    def start_relay(self) -> None:
        """Start the outbox relay now (what its first use would do)."""
        self._relay.get()

    def _open_services(self) -> _Services:
        settings = self.settings
        driver = connect_driver(settings.neo4j) if settings.neo4j.enable else None
        graph = build_graph_store(settings, driver)
        limiter = background_limiter(
            redis.Redis.from_url(settings.redis.url), settings.llm, slot_limit(settings.llm)
        )
        llm = LlmClient(settings.llm, limiter, llm_metrics(settings.metrics.llm_latency_buckets_s))
        ingest = IngestContext(
            settings=settings,
            sessions=self.sessions,
            storage=FileStorage(settings.resolve(settings.storage_dir)),
            embedder=build_embedder(settings.embedding),
            graph=graph,
        )
        graph_ctx = GraphContext(
            settings, self.sessions, llm, graph, embed_names=ingest.embedder.embed
        )
        return _Services(ingest, graph_ctx, driver)

    def _open_memory(self) -> MemoryContext:
        services = self._services.get()
        return open_memory_context(
            self.settings,
            self.sessions,
            services.driver,
            services.ingest.embedder,
            services.graph.llm,
        )

    def _start_relay(self) -> RelayLoop:
        loop = RelayLoop(self.sessions, CeleryTaskQueue(self._app), self.settings.outbox)
        loop.start()
        return loop


_lock = threading.Lock()
_current: ProcessScope | None = None
_threads = 0  # tasks this process runs at once on threads; 0: one at a time (prefork, solo)


def share_among_threads(threads: int) -> None:
    """Size this process's PostgreSQL and Neo4j connection pools for `threads` tasks at once;
    called before the scope opens. A graph task holds a connection of each across its graph
    write, so a pool smaller than the thread count left tasks that had their LLM answer (or
    were about to ask) waiting for a connection while LLM slots stood idle."""
    global _threads
    _threads = threads


def process_scope() -> ProcessScope:
    """This process's scope, over the worker app's settings; a forked child builds its own."""
    global _current
    with _lock:
        if _current is None or _current.pid != os.getpid():
            settings: Settings = app.conf.graphrag_settings
            _current = ProcessScope(sized_for_threads(settings, _threads), app)
        return _current


def warm_up() -> None:
    """Open this process's connections now (database, Neo4j, schema checks, the slot count),
    so the first task does not pay for it."""
    process_scope().open()
