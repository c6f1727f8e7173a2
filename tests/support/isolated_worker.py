"""Driving documents through the core service and a worker of their own (own Redis database and
own PostgreSQL database, so no other relay sends its outbox rows), for tests that kill workers
or point them at another LLM."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import make_engine, make_session_factory, session_scope
from graphrag.db.enums import KnowledgeSource, ParseStatus
from graphrag.db.migrate import upgrade_to_head
from graphrag.db.models import Knowledge
from graphrag.graph.store import GraphStore
from graphrag.ingest.context import IngestContext
from graphrag.ingest.documents import NewDocument, add_document
from graphrag.ingest.storage import FileStorage
from graphrag.kb.schemas import KnowledgeBaseCreate
from graphrag.kb.service import create_kb
from graphrag.search.embeddings import build_embedder
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant
from tests.support.services import create_database, drop_database

__all__ = [
    "add_and_enqueue",
    "core_context",
    "finished",
    "on_own_queues",
    "on_redis_db",
    "own_database",
    "read_document",
    "wait_document",
]

WAIT_TIMEOUT_S = 300.0


def on_redis_db(
    settings: Settings, env: dict[str, str], db: int
) -> tuple[Settings, dict[str, str]]:
    """Settings and environment moved to Redis database `db`: a broker of their own."""
    url = settings.redis.url.rsplit("/", 1)[0] + f"/{db}"
    moved = settings.model_copy(update={"redis": settings.redis.model_copy(update={"url": url})})
    return moved, {**env, "REDIS_URL": url}


_QUEUE_FIELDS = ("default_queue", "docparse_queue", "graph_queue", "memory_queue")


def on_own_queues(settings: Settings, env: dict[str, str]) -> tuple[Settings, dict[str, str]]:
    """Settings and environment whose queues have names of their own: a worker started with
    them is their only consumer, and purging them touches nothing else on a shared broker."""
    suffix = uuid.uuid4().hex[:8]
    names = {field: f"{getattr(settings.celery, field)}-{suffix}" for field in _QUEUE_FIELDS}
    moved = settings.model_copy(update={"celery": settings.celery.model_copy(update=names)})
    return moved, {**env, **{f"CELERY_{field.upper()}": name for field, name in names.items()}}


@contextmanager
def own_database(
    server_url: str, settings: Settings, env: dict[str, str]
) -> Iterator[tuple[Settings, dict[str, str], sessionmaker[Session]]]:
    """A fresh migrated database for a test with a worker of its own: the session's worker and
    API relay only their own database's outbox, so they never take this test's tasks."""
    url = create_database(server_url, "graphrag_own")
    database = settings.database.model_copy(update={"url": url})
    moved = settings.model_copy(update={"database": database})
    upgrade_to_head(moved)
    engine = make_engine(moved)
    try:
        yield moved, {**env, "DATABASE_URL": url}, make_session_factory(engine)
    finally:
        engine.dispose()
        drop_database(url)


def core_context(
    settings: Settings, sessions: sessionmaker[Session], graph: GraphStore
) -> IngestContext:
    return IngestContext(
        settings=settings,
        sessions=sessions,
        storage=FileStorage(settings.resolve(settings.storage_dir)),
        embedder=build_embedder(settings.embedding),
        graph=graph,
    )


def add_and_enqueue(
    ctx: IngestContext, data: bytes, file_name: str, kb: KnowledgeBaseCreate | None = None
) -> tuple[uuid.UUID, uuid.UUID]:
    """A new base with one document, its processing task in the outbox: (kb id, document id).
    The worker's relay sends the task."""
    create = kb or KnowledgeBaseCreate(name=f"kb-{uuid.uuid4().hex[:8]}")
    with session_scope(ctx.sessions) as session:
        tenant = ensure_tenant(session, ctx.settings.api.default_tenant)
        created = create_kb(session, ctx.settings, ctx.graph, tenant, create)
        new = NewDocument(
            data=data, file_name=file_name, media_type=None, source=KnowledgeSource.FILE
        )
        doc = add_document(session, ctx.settings, ctx.storage, tenant, created.id, new)
    return created.id, doc.id


def read_document(ctx: IngestContext, doc_id: uuid.UUID) -> Knowledge:
    with session_scope(ctx.sessions) as session:
        doc = session.get(Knowledge, doc_id)
        assert doc is not None
        return doc


def finished(doc: Knowledge) -> bool:
    """Whether the document reached a terminal status."""
    return doc.parse_status not in ParseStatus.working()


def wait_document(
    ctx: IngestContext,
    doc_id: uuid.UUID,
    done: Callable[[Knowledge], bool],
    timeout_s: float = WAIT_TIMEOUT_S,
) -> Knowledge:
    deadline = time.monotonic() + timeout_s
    while not done(doc := read_document(ctx, doc_id)):
        assert time.monotonic() < deadline, f"timed out: {doc.parse_status} {doc.progress}"
        time.sleep(0.1)
    return doc
