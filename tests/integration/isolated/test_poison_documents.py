"""Poison documents and budgets, driven through the core on real PostgreSQL and Redis: runs
that die are counted and a document whose runs keep dying is failed, a re-parse not refilling
its budget while runs that end do not count; the reconciler gives up after its re-enqueue
budget; a document's graph chunks are capped with the rest visibly skipped.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from celery import Celery
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import GraphStatus, ParseStatus, Stage, StageStatus
from graphrag.db.models import Chunk, Knowledge
from graphrag.extraction.models import ExtractConfig
from graphrag.graph.store import DisabledGraphStore
from graphrag.ingest.context import IngestContext
from graphrag.ingest.documents import get_stages, request_reparse
from graphrag.ingest.processing import ProcessOutcome
from graphrag.ingest.reconcile import reconcile
from graphrag.kb.chunking import ChunkingConfig
from graphrag.kb.schemas import IndexingStrategy, KnowledgeBaseCreate
from graphrag.settings import Settings
from tests.support.isolated_worker import (
    add_and_enqueue,
    core_context,
    read_document,
)
from tests.support.task_leases import process_document

pytestmark = pytest.mark.integration


def _ctx(settings: Settings, sessions: sessionmaker[Session], celery: Celery) -> IngestContext:
    return core_context(settings, sessions, DisabledGraphStore())


def _reparse(ctx: IngestContext, doc_id: uuid.UUID) -> int:
    with session_scope(ctx.sessions) as session:
        doc = session.get(Knowledge, doc_id)
        assert doc is not None
        _, attempt = request_reparse(session, doc.tenant_id, doc_id)
    return attempt


def _die(ctx: IngestContext, doc_id: uuid.UUID, attempt: int, runs: int) -> None:
    """`runs` runs of the attempt that die after their claim, as with a killed worker (the
    stored file is gone: the run raises where no worker is left to settle it)."""
    stored = Path(read_document(ctx, doc_id).storage_path or "")
    body = stored.read_bytes()
    stored.unlink()
    for _ in range(runs):
        with pytest.raises(FileNotFoundError):
            process_document(ctx, doc_id, attempt)
    stored.write_bytes(body)


def test_runs_that_die_are_counted_and_the_document_fails(
    settings: Settings, session_factory: sessionmaker[Session], idle_celery: Celery
) -> None:
    ctx = _ctx(settings, session_factory, idle_celery)
    _, doc_id = add_and_enqueue(ctx, b"A document whose runs keep dying.", "poison.txt")
    stored = Path(read_document(ctx, doc_id).storage_path or "")
    body = stored.read_bytes()
    stored.unlink()  # every run now dies mid-way, after its claim, like a killed worker
    limit = settings.ingest.max_deliveries
    for run in range(1, limit + 1):
        with pytest.raises(FileNotFoundError):
            process_document(ctx, doc_id, 1)
        doc = read_document(ctx, doc_id)
        assert doc.deliveries == run and doc.parse_status == ParseStatus.PROCESSING
    stored.write_bytes(body)  # even a file that could now be read is not tried again
    assert process_document(ctx, doc_id, 1) is ProcessOutcome.STALE
    doc = read_document(ctx, doc_id)
    assert doc.parse_status == ParseStatus.FAILED and doc.chunk_count == 0
    assert doc.error is not None and f"stopped {limit} times" in doc.error
    assert process_document(ctx, doc_id, 1) is ProcessOutcome.STALE
    assert read_document(ctx, doc_id).deliveries == limit


def _age(sessions: sessionmaker[Session], doc_id: uuid.UUID, status: ParseStatus) -> None:
    with session_scope(sessions) as session:
        session.execute(
            update(Knowledge)
            .where(Knowledge.id == doc_id)
            .values(parse_status=status, status_changed_at=Knowledge.created_at)
        )


@pytest.mark.parametrize("status", [ParseStatus.PROCESSING, ParseStatus.FINALIZING])
def test_reconciler_gives_up_after_its_requeue_budget(
    settings: Settings,
    session_factory: sessionmaker[Session],
    idle_celery: Celery,
    status: ParseStatus,
) -> None:
    ctx = _ctx(settings, session_factory, idle_celery)
    _, doc_id = add_and_enqueue(ctx, f"Stuck {status} {uuid.uuid4()}".encode(), "stuck.txt")
    for _ in range(settings.ingest.max_requeues):
        _age(session_factory, doc_id, status)
        report = reconcile(ctx, stuck_after_s=0)
        assert doc_id in report.reprocessed + report.re_extracted
    _age(session_factory, doc_id, status)
    report = reconcile(ctx, stuck_after_s=0)
    assert doc_id in report.failed
    assert doc_id not in report.reprocessed + report.re_extracted
    doc = read_document(ctx, doc_id)
    assert doc.parse_status == ParseStatus.FAILED and "re-enqueues" in (doc.error or "")
    assert doc_id not in reconcile(ctx, stuck_after_s=0).failed  # settled: left alone


def test_graph_chunks_beyond_the_budget_are_skipped_with_a_reason(
    settings: Settings, session_factory: sessionmaker[Session], idle_celery: Celery
) -> None:
    cap = 3
    capped = settings.model_copy(
        update={"ingest": settings.ingest.model_copy(update={"graph_max_chunks": cap})}
    )
    ctx = _ctx(capped, session_factory, idle_celery)
    paragraphs = [f"Paragraph {i} names the harbour of town {i} and its mayor." for i in range(10)]
    kb = KnowledgeBaseCreate(
        name=f"kb-{uuid.uuid4().hex[:8]}",
        chunking=ChunkingConfig(chunk_size=60, chunk_overlap=0, separators=["\n\n"]),
        indexing=IndexingStrategy(graph_enabled=True),
        extract_config=ExtractConfig(enabled=True),
    )
    _, doc_id = add_and_enqueue(ctx, "\n\n".join(paragraphs).encode(), "many.txt", kb)
    assert process_document(ctx, doc_id, 1) is ProcessOutcome.INDEXED
    with session_scope(session_factory) as session:
        chunks = session.execute(
            select(Chunk.graph_status, Chunk.graph_error)
            .where(Chunk.knowledge_id == doc_id)
            .order_by(Chunk.seq)
        ).all()
        doc = session.get(Knowledge, doc_id)
        assert doc is not None
        stages = get_stages(session, doc.tenant_id, doc_id).stages
    assert len(chunks) == 10
    assert [status for status, _ in chunks] == [GraphStatus.PENDING] * cap + [
        GraphStatus.SKIPPED
    ] * (10 - cap)
    assert all("graph budget of 3 chunks" in (error or "") for _, error in chunks[cap:])
    assert doc.pending_subtasks_count == cap and doc.parse_status == ParseStatus.FINALIZING
    graph = stages[Stage.GRAPH]
    assert graph.status is StageStatus.RUNNING
    assert graph.total == cap and graph.skipped == 10 - cap
    assert graph.detail is not None and "graph_max_chunks" in graph.detail


def test_a_re_parse_does_not_refill_the_budget_of_runs_that_died(
    settings: Settings, session_factory: sessionmaker[Session], idle_celery: Celery
) -> None:
    ctx = _ctx(settings, session_factory, idle_celery)
    _, doc_id = add_and_enqueue(ctx, b"A document that kills its workers.", "killer.txt")
    limit = settings.ingest.max_deliveries
    _die(ctx, doc_id, 1, limit - 1)
    attempt = _reparse(ctx, doc_id)
    doc = read_document(ctx, doc_id)
    assert (doc.deliveries, doc.unsettled_runs) == (0, limit - 1)  # a fresh attempt, not budget
    _die(ctx, doc_id, attempt, 1)
    # The next run finds the budget spent, over both attempts: failed without running.
    assert process_document(ctx, doc_id, attempt) is ProcessOutcome.STALE
    doc = read_document(ctx, doc_id)
    assert (doc.parse_status, doc.deliveries, doc.chunk_count) == (ParseStatus.FAILED, 1, 0)
    assert doc.error is not None
    assert f"stopped {limit} times" in doc.error and "ingest.max_deliveries" in doc.error
    # Re-parsed once more, the document is failed again at its first delivery.
    attempt = _reparse(ctx, doc_id)
    assert process_document(ctx, doc_id, attempt) is ProcessOutcome.STALE
    doc = read_document(ctx, doc_id)
    assert (doc.parse_status, doc.deliveries) == (ParseStatus.FAILED, 0)
    assert f"budget of {limit}" in (doc.error or "")


def test_runs_that_end_do_not_count_against_the_budget(
    settings: Settings, session_factory: sessionmaker[Session], idle_celery: Celery
) -> None:
    ctx = _ctx(settings, session_factory, idle_celery)
    _, doc_id = add_and_enqueue(ctx, b"A healthy document, parsed again and again.", "ok.txt")
    limit = settings.ingest.max_deliveries
    attempt = 1
    for _ in range(limit + 1):
        assert process_document(ctx, doc_id, attempt) is ProcessOutcome.INDEXED
        attempt = _reparse(ctx, doc_id)
    _die(ctx, doc_id, attempt, 1)  # one run that died: still within the budget
    assert process_document(ctx, doc_id, attempt) is ProcessOutcome.INDEXED
    doc = read_document(ctx, doc_id)
    assert doc.parse_status == ParseStatus.COMPLETED and doc.attempt == limit + 2
    assert (doc.deliveries, doc.unsettled_runs) == (2, 1)
