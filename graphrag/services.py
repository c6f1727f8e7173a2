"""The one composition root: every process (the API, a worker, a command) opens its services here.

`open_services(settings, role, queue)` owns the engine, the Redis client, the Neo4j driver and
the graph store, the embedder, the LLM client, file storage and the outbox relay. The smaller
bundles the core's functions take (`ChatServices`, `FaceServices`, `IngestContext`,
`GraphContext`, `MemoryContext`) are views made here, over these same objects. Each part opens
on first use, under a lock of its own, so the relay (the database alone) never waits for a slow
Neo4j connection, and a command that needs only the database opens nothing else. `close()`
releases what was opened, in the reverse order. The objects are safe to share among threads;
a forked process opens its own.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from enum import StrEnum
from typing import Generic, TypeVar, cast

import redis
from neo4j import Driver

from graphrag.chat.turn import ChatServices, MemoryPort
from graphrag.db.engine import make_engine, make_session_factory, wait_for_db
from graphrag.faces.services import FaceServices
from graphrag.graph.factory import build_graph_store
from graphrag.graph.neo4j_client import connect_driver
from graphrag.graph.resolution.store import Neo4jResolutionStore
from graphrag.graph.store import GraphStore
from graphrag.ingest.context import IngestContext
from graphrag.ingest.graph.chunk_extraction import GraphContext
from graphrag.ingest.storage import FileStorage
from graphrag.llm.client import LlmClient
from graphrag.llm.concurrency import background_limiter, interactive_limiter
from graphrag.llm.server_info import slot_limit
from graphrag.memory.context import MemoryContext, open_memory_context
from graphrag.metrics import llm_metrics
from graphrag.outbox.relay_loop import RelayLoop
from graphrag.search.embeddings import Embedder, build_embedder
from graphrag.settings import Settings
from graphrag.task_queue import TaskQueue

__all__ = ["Role", "Services", "open_services"]

_T = TypeVar("_T")
_UNSET = object()


class Role(StrEnum):
    """What the process is, which decides the LLM slots its calls take."""

    API = "api"  # interactive slots; waits for the database before it serves
    WORKER = "worker"  # background slots, as many as the LLM server has
    COMMAND = "command"  # a command-line process (`ask`, `mcp`, `ingest`): interactive slots


class _Once(Generic[_T]):
    """A part opened on first use, once: a thread that comes while it opens waits for it."""

    def __init__(self, build: Callable[[], _T]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._value: object = _UNSET  # a part may be None (no Neo4j driver when the graph is off)

    def get(self) -> _T:
        with self._lock:
            if self._value is _UNSET:
                self._value = self._build()
            return cast(_T, self._value)

    def opened(self) -> _T | None:
        """The part if it was opened, without opening it."""
        with self._lock:
            return None if self._value is _UNSET else cast(_T, self._value)


class Services:
    """One process's services (see the module); each property opens its part on first use."""

    def __init__(self, settings: Settings, role: Role, queue: TaskQueue) -> None:
        self.settings = settings
        self.role = role
        self.pid = os.getpid()  # the process that opened them: a forked child opens its own
        self.queue = queue  # where the relay sends the outbox rows
        self.engine = make_engine(settings)  # connects on first use only
        self.sessions = make_session_factory(self.engine)
        self.storage = FileStorage(settings.resolve(settings.storage_dir))
        self._redis = _Once(lambda: redis.Redis.from_url(settings.redis.url))
        self._driver = _Once(self._connect_driver)
        self._graph = _Once(lambda: build_graph_store(settings, self.neo4j))
        self._embedder = _Once(lambda: build_embedder(settings.embedding))
        self._llm = _Once(self._open_llm)
        self._relay = _Once(self._start_relay)
        self._resolution = _Once(self._open_resolution)
        self._graph_context = _Once(self._open_graph_context)
        self._memory = _Once(self._open_memory)

    @property
    def redis(self) -> redis.Redis[bytes]:
        """The Redis client (slots, rate limits, queue depths)."""
        return self._redis.get()

    @property
    def neo4j(self) -> Driver | None:
        """The process's one Neo4j driver; None when the graph is off."""
        return self._driver.get()

    @property
    def graph(self) -> GraphStore:
        """The graph store (its schema ensured), or the no-op store when the graph is off."""
        return self._graph.get()

    @property
    def resolution(self) -> Neo4jResolutionStore | None:
        """Entity resolution's store (its schema ensured); None when the graph is off."""
        return self._resolution.get()

    @property
    def embedder(self) -> Embedder:
        """The embedder `embedding.backend` names."""
        return self._embedder.get()

    @property
    def llm(self) -> LlmClient:
        """The LLM client on the slots of the process's role."""
        return self._llm.get()

    @property
    def relay(self) -> RelayLoop:
        """The outbox relay, running from its first use."""
        return self._relay.get()

    def start_relay(self) -> None:
        """Start the outbox relay now (what its first use would do)."""
        self._relay.get()

    def open(self) -> None:
        """Open the Neo4j, embedding and LLM side now (what a first use would open)."""
        self._graph.get()
        self._resolution.get()
        self._embedder.get()
        self._llm.get()

    def chat(self, memory: MemoryPort | None = None) -> ChatServices:
        """The chat over these services; `memory` for a chat that keeps a conversation."""
        return ChatServices(
            settings=self.settings,
            sessions=self.sessions,
            embedder=self.embedder,
            llm=self.llm,
            graph=self.graph,
            memory=memory,
        )

    def faces(self) -> FaceServices:
        """What the OpenAI-compatible and MCP faces use (they keep no conversation)."""
        return FaceServices(chat=self.chat(), storage=self.storage, relay=self.relay)

    def ingest(self) -> IngestContext:
        """What document processing and purges use."""
        return IngestContext(
            settings=self.settings,
            sessions=self.sessions,
            storage=self.storage,
            embedder=self.embedder,
            graph=self.graph,
            resolution=self.resolution,
        )

    def graph_context(self) -> GraphContext:
        """What graph extraction uses: one per process, its names in hand shared by threads."""
        return self._graph_context.get()

    def memory(self) -> MemoryContext:
        """The agent memory (its Neo4j schema ensured once); without Neo4j it has no archive."""
        return self._memory.get()

    def close(self) -> None:
        """Release what was opened, the relay first (it may be sending), the engine last."""
        relay = self._relay.opened()
        if relay is not None:
            relay.stop(self.settings.outbox.relay_interval_s)
        graph = self._graph.opened()
        if graph is not None:
            graph.close()  # the Neo4j store closes the driver it holds
        elif (driver := self._driver.opened()) is not None:
            driver.close()
        embedder = self._embedder.opened()
        if embedder is not None:
            embedder.close()
        client = self._redis.opened()
        if client is not None:
            client.close()
        self.engine.dispose()

    def _connect_driver(self) -> Driver | None:
        return connect_driver(self.settings.neo4j) if self.settings.neo4j.enable else None

    def _open_llm(self) -> LlmClient:
        llm = self.settings.llm
        if self.role is Role.WORKER:
            limiter = background_limiter(self.redis, llm, slot_limit(llm))
        else:
            limiter = interactive_limiter(self.redis, llm)
        return LlmClient(llm, limiter, llm_metrics(self.settings.metrics.llm_latency_buckets_s))

    def _start_relay(self) -> RelayLoop:
        loop = RelayLoop(self.sessions, self.queue, self.settings.outbox)
        loop.start()
        return loop

    def _open_graph_context(self) -> GraphContext:
        return GraphContext(
            self.settings,
            self.sessions,
            self.llm,
            self.graph,
            embed_names=self.embedder.embed,
            resolution=self.resolution,
        )

    def _open_resolution(self) -> Neo4jResolutionStore | None:
        driver = self.neo4j
        if driver is None:
            return None
        store = Neo4jResolutionStore(driver, self.settings.neo4j)
        store.ensure_schema()
        return store

    def _open_memory(self) -> MemoryContext:
        # Only a worker's memory calls the LLM (extraction when a session closes); the API's
        # memory routes never do.
        llm = self.llm if self.role is Role.WORKER else None
        return open_memory_context(self.settings, self.sessions, self.neo4j, self.embedder, llm)


def open_services(settings: Settings, role: Role, queue: TaskQueue) -> Services:
    """This process's services. The API waits for the database and opens every part before it
    serves (routes kick the relay after their commits); other roles open each part on first use."""
    services = Services(settings, role, queue)
    if role is Role.API:
        wait_for_db(services.engine, settings)
        services.start_relay()
        services.open()
        services.memory()
    return services
