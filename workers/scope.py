"""Per-process resources of a worker, opened lazily in the child process (after the fork).

One scope per process, shared by its threads (a graph worker runs threads sized by the LLM
slots): the SQLAlchemy engine, the sync Neo4j driver, the Redis client, the OpenAI client and the
embedder are all safe to share across threads, and every task opens its own session from them.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import redis
from neo4j import Driver

from graphrag.db.engine import make_engine, make_session_factory
from graphrag.graph.factory import build_graph_store
from graphrag.graph.neo4j_client import connect_driver
from graphrag.ingest.chunk_extraction import GraphContext
from graphrag.ingest.context import IngestContext
from graphrag.ingest.storage import FileStorage
from graphrag.llm.client import LlmClient
from graphrag.llm.concurrency import LeaseSemaphore
from graphrag.llm.server_info import slot_limit
from graphrag.metrics import llm_metrics
from graphrag.search.embeddings import build_embedder
from graphrag.settings import Settings, get_settings
from workers.pool import sized_for_threads

__all__ = ["graph_context", "ingest_context", "neo4j_driver", "share_among_threads", "warm_up"]


@dataclass(frozen=True)
class _Scope:
    ingest: IngestContext
    graph: GraphContext
    driver: Driver | None  # the process's one Neo4j driver; None when the graph is off


_lock = threading.Lock()
_scopes: dict[int, _Scope] = {}
_threads = 0  # tasks this process runs at once on threads; 0: one at a time (prefork, solo)


def share_among_threads(threads: int) -> None:
    """Size this process's PostgreSQL and Neo4j connection pools for `threads` tasks at once;
    called before the scope opens. A graph task holds a connection of each across its graph
    write, so a pool smaller than the thread count left tasks that had their LLM answer (or
    were about to ask) waiting for a connection while LLM slots stood idle."""
    global _threads
    _threads = threads


def llm_slots_key(settings: Settings) -> str:
    return f"graphrag:llm-slots:{settings.llm.model}"


def _open(settings: Settings) -> _Scope:
    sessions = make_session_factory(make_engine(settings))
    driver = connect_driver(settings.neo4j) if settings.neo4j.enable else None
    graph = build_graph_store(settings, driver)
    limiter = LeaseSemaphore(
        redis.Redis.from_url(settings.redis.url),
        llm_slots_key(settings),
        slot_limit(settings.llm),
        settings.llm.concurrency_lease_s,
        settings.llm.concurrency_wait_s,
        settings.llm.concurrency_poll_s,
    )
    llm = LlmClient(settings.llm, limiter, llm_metrics(settings.metrics.llm_latency_buckets_s))
    ingest = IngestContext(
        settings=settings,
        sessions=sessions,
        storage=FileStorage(settings.resolve(settings.storage_dir)),
        embedder=build_embedder(settings.embedding),
        graph=graph,
    )
    graph_ctx = GraphContext(settings, sessions, llm, graph, embed_names=ingest.embedder.embed)
    return _Scope(ingest, graph_ctx, driver)


def _scope() -> _Scope:
    """This process's scope; a forked child builds its own (pools do not survive a fork)."""
    pid = os.getpid()
    with _lock:
        scope = _scopes.get(pid)
        if scope is None:
            scope = _scopes[pid] = _open(sized_for_threads(get_settings(), _threads))
        return scope


def ingest_context() -> IngestContext:
    return _scope().ingest


def graph_context() -> GraphContext:
    return _scope().graph


def neo4j_driver() -> Driver | None:
    """This process's Neo4j driver (the one its graph store uses); None when the graph is off."""
    return _scope().driver


def warm_up() -> None:
    """Open this process's scope now (connections, schema checks, the slot count), so the
    first task does not pay for it."""
    _scope()
