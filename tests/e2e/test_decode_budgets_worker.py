"""Decode budgets in a real docparse worker: a TIFF over the frame cap, a PDF over the page cap,
a picture over the pixel budget and a DOCX of too many files each end `failed` with the budget
that stopped them, after one delivery (a refusal is not a crash: nothing is redelivered), while a
normal document queued behind them completes on the same process."""

from __future__ import annotations

import io
import uuid

import pytest
import redis
from celery import Celery
from PIL import Image

from graphrag.db.enums import ParseStatus
from graphrag.graph.store import DisabledGraphStore
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

pytestmark = pytest.mark.e2e

# This worker's budgets, far below the defaults so that small files cross them.
CAPS = {
    "INGEST_TIFF_MAX_FRAMES": "3",
    "INGEST_PDF_MAX_PAGES": "2",
    "INGEST_IMAGE_MAX_PIXELS": "40000",
    "INGEST_DOCX_MAX_ENTRIES": "30",
}


def _png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("L", (width, height), 255).save(out, format="PNG")
    return out.getvalue()


def test_files_over_their_decode_budget_fail_once_with_the_reason(
    settings: Settings, settings_env: dict[str, str], services_env: dict[str, str]
) -> None:
    from workers.celery_app import create_celery

    moved, env = on_own_queues(settings, settings_env)
    with own_database(services_env["DATABASE_URL"], moved, env) as (own, env, sessions):
        celery: Celery = create_celery(own)
        ctx = core_context(own, sessions, DisabledGraphStore())
        hostile = {
            "frames": (sample_files.tiff_frames(5), "many-frames.tiff", "5 frames"),
            "pages": (sample_files.text_pdf(["a", "b", "c", "d"]), "long.pdf", "4 pages"),
            "pixels": (_png(300, 200), "wide.png", "300x200"),
            "files": (
                sample_files.docx_with_extra_entries(40),
                "crowded.docx",
                "(at most 30, ingest.docx_max_entries)",
            ),
        }
        log = data_dir() / "test-logs" / "worker-decode-budgets.log"
        worker = WorkerProcess({**env, **CAPS}, log, concurrency=1)
        worker.start(celery)
        try:
            ids = {
                name: add_and_enqueue(ctx, data, file_name)[1]
                for name, (data, file_name, _) in hostile.items()
            }
            note = f"A normal note about harbour cranes {uuid.uuid4()}".encode()
            _, normal_id = add_and_enqueue(ctx, note, "normal.txt")
            normal = wait_document(ctx, normal_id, finished)
            ended = {name: wait_document(ctx, doc_id, finished) for name, doc_id in ids.items()}
        finally:
            worker.stop()

        assert normal.parse_status == ParseStatus.COMPLETED, normal.error
        for name, doc in ended.items():
            reason = hostile[name][2]
            assert doc.parse_status == ParseStatus.FAILED, (name, doc.parse_status)
            assert reason in (doc.error or ""), (name, doc.error)
            assert (doc.deliveries, doc.chunk_count) == (1, 0), name
        queued = redis.Redis.from_url(own.redis.url).llen(own.celery.docparse_queue)
        assert queued == 0
