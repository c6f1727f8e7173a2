"""A document is never waiting without its task: the core's requests (add, re-parse, delete, a
base's delete) write the task that moves the document on in their own transaction, on a
database of the test's own where no relay sends them; a cancel stops the attempt and asks for
nothing."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest
from celery import Celery
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import KnowledgeSource, ParseStatus
from graphrag.db.models import Knowledge, OutboxTask
from graphrag.errors import ConflictError
from graphrag.graph.store import DisabledGraphStore
from graphrag.ingest.context import IngestContext
from graphrag.ingest.documents import (
    NewDocument,
    add_document,
    request_cancel,
    request_delete,
    request_reparse,
)
from graphrag.ingest.processing import ProcessOutcome
from graphrag.kb.schemas import KnowledgeBaseCreate
from graphrag.kb.service import create_kb, request_kb_delete
from graphrag.search.embeddings import Embedder
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant
from tests.support.isolated_worker import add_and_enqueue, core_context, read_document
from tests.support.task_leases import process_document

pytestmark = pytest.mark.integration


def _ctx(settings: Settings, sessions: sessionmaker[Session], celery: Celery) -> IngestContext:
    return core_context(settings, sessions, DisabledGraphStore())


def _tasks(ctx: IngestContext) -> list[tuple[str, list[object]]]:
    with session_scope(ctx.sessions) as session:
        query = select(OutboxTask.task_name, OutboxTask.args).order_by(OutboxTask.id)
        return [(name, list(args)) for name, args in session.execute(query)]


def _tenant(ctx: IngestContext, doc_id: uuid.UUID) -> uuid.UUID:
    return read_document(ctx, doc_id).tenant_id


def test_each_request_writes_its_task_with_the_document(
    settings: Settings, session_factory: sessionmaker[Session], idle_celery: Celery
) -> None:
    ctx = _ctx(settings, session_factory, idle_celery)
    kb_id, doc_id = add_and_enqueue(ctx, f"Tasks {uuid.uuid4()}".encode(), "tasks.txt")
    assert _tasks(ctx) == [("document.process", [str(doc_id), 1])]
    tenant = _tenant(ctx, doc_id)
    with session_scope(ctx.sessions) as session:
        _, attempt = request_reparse(session, tenant, doc_id)
    assert attempt == 2 and read_document(ctx, doc_id).parse_status == ParseStatus.PENDING
    assert _tasks(ctx)[-1] == ("document.process", [str(doc_id), 2])
    with session_scope(ctx.sessions) as session:
        request_delete(session, tenant, doc_id)
    assert read_document(ctx, doc_id).parse_status == ParseStatus.DELETING
    assert _tasks(ctx)[-1] == ("document.delete", [str(doc_id)])
    with session_scope(ctx.sessions) as session:
        request_kb_delete(session, tenant, kb_id)
    assert _tasks(ctx)[-1] == ("document.delete_kb", [str(kb_id)])


def test_an_add_that_rolls_back_leaves_neither_document_nor_task(
    settings: Settings, session_factory: sessionmaker[Session], idle_celery: Celery
) -> None:
    ctx = _ctx(settings, session_factory, idle_celery)
    new = NewDocument(b"Never kept.", "kept.txt", None, KnowledgeSource.FILE)
    with pytest.raises(RuntimeError), session_scope(ctx.sessions) as session:
        tenant = ensure_tenant(session, settings.api.default_tenant)
        kb = create_kb(session, settings, ctx.graph, tenant, KnowledgeBaseCreate(name="rolled"))
        add_document(session, settings, ctx.storage, tenant, kb.id, new)
        raise RuntimeError("the request failed after the insert")
    with session_scope(ctx.sessions) as session:
        assert session.execute(select(Knowledge.id)).first() is None
    assert _tasks(ctx) == []


def test_a_cancel_stops_the_attempt_and_asks_for_no_task(
    settings: Settings, session_factory: sessionmaker[Session], idle_celery: Celery
) -> None:
    ctx = _ctx(settings, session_factory, idle_celery)
    _, doc_id = add_and_enqueue(ctx, f"Cancel {uuid.uuid4()}".encode(), "cancel.txt")
    tenant = _tenant(ctx, doc_id)
    with session_scope(ctx.sessions) as session:
        cancelled = request_cancel(session, tenant, doc_id)
    assert cancelled.parse_status == ParseStatus.CANCELLED and cancelled.attempt == 1
    assert _tasks(ctx) == [("document.process", [str(doc_id), 1])]  # the upload's, no other
    with pytest.raises(ConflictError), session_scope(ctx.sessions) as session:
        request_cancel(session, tenant, doc_id)
    assert read_document(ctx, doc_id).parse_status == ParseStatus.CANCELLED


class _CancelWhileEmbedding:
    """The context's embedder, which cancels the document before it answers: the write then
    finds its attempt stale."""

    def __init__(self, inner: Embedder, cancel: Callable[[], None]) -> None:
        self._inner, self._cancel = inner, cancel

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self._cancel()
        return self._inner.embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._inner.embed_query(text)

    def close(self) -> None:
        self._inner.close()


def test_a_write_that_finds_its_attempt_cancelled_ends_its_run_and_its_task(
    settings: Settings, session_factory: sessionmaker[Session], idle_celery: Celery
) -> None:
    ctx = _ctx(settings, session_factory, idle_celery)
    _, doc_id = add_and_enqueue(ctx, f"Cancelled late {uuid.uuid4()}".encode(), "late.txt")
    tenant = _tenant(ctx, doc_id)

    def cancel() -> None:
        with session_scope(ctx.sessions) as session:
            request_cancel(session, tenant, doc_id)

    late = replace(ctx, embedder=_CancelWhileEmbedding(ctx.embedder, cancel))
    assert process_document(late, doc_id, 1) is ProcessOutcome.STALE
    doc = read_document(ctx, doc_id)
    assert (doc.parse_status, doc.unsettled_runs, doc.chunk_count) == (ParseStatus.CANCELLED, 0, 0)
    assert _tasks(ctx) == []  # the task's row went with the run's end
