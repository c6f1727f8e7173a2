"""A worker SIGKILLed in the middle of a document: after a restart the document completes with
exactly the chunks of a clean run (no loss, no duplicates). Tasks go through the outbox: the
worker's own relay sends them, the reconciler re-arms the lost one."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select

from graphrag.db.engine import session_scope
from graphrag.db.enums import ParseStatus
from graphrag.db.models import Chunk, OutboxTask
from graphrag.graph.store import DisabledGraphStore
from graphrag.ingest.context import IngestContext
from graphrag.ingest.reconcile import reconcile
from graphrag.settings import Settings
from tests.support import sample_files
from tests.support.isolated_worker import (
    add_and_enqueue,
    core_context,
    finished,
    on_own_queues,
    own_database,
    wait_document,
)
from tests.support.services import data_dir
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration

PAGES = 6


def _chunks(ctx: IngestContext, doc_id: uuid.UUID) -> list[tuple[int, str, str, int | None]]:
    with session_scope(ctx.sessions) as session:
        rows = session.execute(
            select(Chunk.seq, Chunk.chunk_type, Chunk.content, Chunk.page)
            .where(Chunk.knowledge_id == doc_id)
            .order_by(Chunk.seq)
        ).all()
    return [(r.seq, r.chunk_type, r.content, r.page) for r in rows]


def _outbox_rows(ctx: IngestContext) -> int:
    with session_scope(ctx.sessions) as session:
        return len(session.execute(select(OutboxTask.id)).all())


def test_sigkill_mid_document_then_restart(
    settings: Settings, settings_env: dict[str, str], services_env: dict[str, str]
) -> None:
    moved, env = on_own_queues(settings, settings_env)
    with own_database(services_env["DATABASE_URL"], moved, env) as (own_settings, env, sessions):
        _kill_and_recover(
            own_settings, env, core_context(own_settings, sessions, DisabledGraphStore())
        )


def _kill_and_recover(own_settings: Settings, env: dict[str, str], ctx: IngestContext) -> None:
    from workers.celery_app import create_celery

    celery = create_celery(own_settings)
    celery.control.purge()
    pages = [[f"KILL TEST PAGE {i}", f"token{i} harbour"] for i in range(PAGES)]
    data = sample_files.scanned_pdf(pages)
    log = data_dir() / "test-logs" / "worker-kill.log"

    victim = WorkerProcess(env, log, concurrency=1)
    victim.start(celery)
    _, doc_id = add_and_enqueue(ctx, data, "scan.pdf")
    mid = wait_document(ctx, doc_id, lambda d: d.progress.get("parse", {}).get("done", 0) >= 2)
    victim.kill()
    assert mid.parse_status == ParseStatus.PROCESSING
    assert _chunks(ctx, doc_id) == []

    survivor = WorkerProcess(env, log, concurrency=1)
    survivor.start(celery)
    try:
        report = reconcile(ctx, stuck_after_s=0)
        assert doc_id in report.reprocessed
        recovered = wait_document(ctx, doc_id, finished)
        assert recovered.parse_status == ParseStatus.COMPLETED
        _, clean_id = add_and_enqueue(ctx, data, "scan.pdf")
        clean = wait_document(ctx, clean_id, finished)
        assert clean.parse_status == ParseStatus.COMPLETED
    finally:
        survivor.stop()
    recovered_chunks, clean_chunks = _chunks(ctx, doc_id), _chunks(ctx, clean_id)
    assert recovered_chunks == clean_chunks
    assert len(recovered_chunks) >= PAGES * 2
    assert recovered.chunk_count == len(recovered_chunks)
    assert _outbox_rows(ctx) == 0  # every task settled its row
