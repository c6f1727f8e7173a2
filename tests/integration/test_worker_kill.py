"""A worker SIGKILLed in the middle of a document: after a restart the document completes with
exactly the chunks of a clean run (no loss, no duplicates)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from celery import Celery
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import KnowledgeSource, ParseStatus
from graphrag.db.models import Chunk, Knowledge
from graphrag.graph.store import DisabledGraphStore
from graphrag.ingest.context import IngestContext
from graphrag.ingest.documents import NewDocument, add_document
from graphrag.ingest.reconcile import reconcile
from graphrag.ingest.storage import FileStorage
from graphrag.kb.schemas import KnowledgeBaseCreate
from graphrag.kb.service import create_kb
from graphrag.search.embeddings import build_embedder
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant
from tests.support import sample_files
from tests.support.services import data_dir
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration

PAGES = 6
KILL_TEST_REDIS_DB = 3  # outside the range the session fixtures pick from
TIMEOUT_S = 300.0


@pytest.fixture()
def isolated(
    settings: Settings, settings_env: dict[str, str]
) -> Iterator[tuple[Settings, dict[str, str]]]:
    """Its own Redis database, so the session's worker never sees these tasks."""
    url = settings.redis.url.rsplit("/", 1)[0] + f"/{KILL_TEST_REDIS_DB}"
    redis_settings = settings.redis.model_copy(update={"url": url})
    yield settings.model_copy(update={"redis": redis_settings}), {**settings_env, "REDIS_URL": url}


def _context(settings: Settings, sessions: sessionmaker[Session], celery: Celery) -> IngestContext:
    from workers.queue import CeleryTaskQueue

    return IngestContext(
        settings=settings,
        sessions=sessions,
        storage=FileStorage(settings.resolve(settings.storage_dir)),
        embedder=build_embedder(settings.embedding),
        graph=DisabledGraphStore(),
        queue=CeleryTaskQueue(celery),
    )


def _add(ctx: IngestContext, data: bytes) -> uuid.UUID:
    with session_scope(ctx.sessions) as session:
        tenant = ensure_tenant(session, ctx.settings.api.default_tenant)
        kb = create_kb(
            session,
            ctx.settings,
            ctx.graph,
            tenant,
            KnowledgeBaseCreate(name=f"kill-{uuid.uuid4().hex[:8]}"),
        )
        doc = add_document(
            session,
            ctx.settings,
            ctx.storage,
            tenant,
            kb.id,
            NewDocument(
                data=data, file_name="scan.pdf", media_type=None, source=KnowledgeSource.FILE
            ),
        )
    ctx.queue.process_document(doc.id, doc.attempt)
    return doc.id


def _doc(ctx: IngestContext, doc_id: uuid.UUID) -> Knowledge:
    with session_scope(ctx.sessions) as session:
        doc = session.get(Knowledge, doc_id)
        assert doc is not None
        return doc


def _wait(ctx: IngestContext, doc_id: uuid.UUID, done: Callable[[Knowledge], bool]) -> Knowledge:
    deadline = time.monotonic() + TIMEOUT_S
    while not done(doc := _doc(ctx, doc_id)):
        assert time.monotonic() < deadline, f"timed out: {doc.parse_status} {doc.progress}"
        time.sleep(0.1)
    return doc


def _chunks(ctx: IngestContext, doc_id: uuid.UUID) -> list[tuple[int, str, str, int | None]]:
    with session_scope(ctx.sessions) as session:
        rows = session.execute(
            select(Chunk.seq, Chunk.chunk_type, Chunk.content, Chunk.page)
            .where(Chunk.knowledge_id == doc_id)
            .order_by(Chunk.seq)
        ).all()
    return [(r.seq, r.chunk_type, r.content, r.page) for r in rows]


def test_sigkill_mid_document_then_restart(
    isolated: tuple[Settings, dict[str, str]], session_factory: sessionmaker[Session]
) -> None:
    from workers.celery_app import create_celery

    settings, env = isolated
    celery = create_celery(settings)
    celery.control.purge()
    ctx = _context(settings, session_factory, celery)
    data = sample_files.scanned_pdf(
        [[f"KILL TEST PAGE {i}", f"token{i} harbour"] for i in range(PAGES)]
    )
    log = data_dir() / "test-logs" / "worker-kill.log"

    victim = WorkerProcess(env, log, concurrency=1)
    victim.start(celery)
    doc_id = _add(ctx, data)
    mid = _wait(ctx, doc_id, lambda d: d.progress.get("parse", {}).get("done", 0) >= 2)
    victim.kill()
    assert mid.parse_status == ParseStatus.PROCESSING
    assert _chunks(ctx, doc_id) == []

    survivor = WorkerProcess(env, log, concurrency=1)
    survivor.start(celery)
    try:
        report = reconcile(ctx, stuck_after_s=0)
        assert doc_id in report.reprocessed
        recovered = _wait(ctx, doc_id, lambda d: d.parse_status not in ParseStatus.working())
        assert recovered.parse_status == ParseStatus.COMPLETED

        clean_id = _add(ctx, data)
        clean = _wait(ctx, clean_id, lambda d: d.parse_status not in ParseStatus.working())
        assert clean.parse_status == ParseStatus.COMPLETED
    finally:
        survivor.stop()
    recovered_chunks, clean_chunks = _chunks(ctx, doc_id), _chunks(ctx, clean_id)
    assert recovered_chunks == clean_chunks
    assert len(recovered_chunks) >= PAGES * 2
    assert recovered.chunk_count == len(recovered_chunks)
