"""The memory ceiling of a real docparse worker: a picture within its pixel budget whose decoding
needs more memory than the worker's child may use ends `failed`, the reason naming the ceiling,
while the child goes on to complete a normal document and the API keeps answering."""

from __future__ import annotations

import uuid

import httpx
import pytest
from celery import Celery

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

CEILING_MB = 1024
SIDE = 20_000  # 400 MB of greyscale pixels, 1.2 GB once converted to RGB for OCR
CAPS = {
    "CELERY_WORKER_MEMORY_CEILING_MB": str(CEILING_MB),
    # The picture passes the pixel budget: only the memory ceiling can stop it.
    "INGEST_IMAGE_MAX_PIXELS": str(SIDE * SIDE),
}


def test_a_parse_past_the_memory_ceiling_fails_in_the_worker_child_alone(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    http: httpx.Client,
) -> None:
    from workers.celery_app import create_celery

    moved, env = on_own_queues(settings, settings_env)
    with own_database(services_env["DATABASE_URL"], moved, env) as (own, env, sessions):
        celery: Celery = create_celery(own)
        ctx = core_context(own, sessions, DisabledGraphStore())
        log = data_dir() / "test-logs" / "worker-memory-ceiling.log"
        worker = WorkerProcess({**env, **CAPS}, log, concurrency=1)
        worker.start(celery)
        try:
            _, heavy_id = add_and_enqueue(ctx, sample_files.blank_png(SIDE, SIDE), "huge.png")
            note = f"A normal note about harbour cranes {uuid.uuid4()}".encode()
            _, normal_id = add_and_enqueue(ctx, note, "normal.txt")
            heavy = wait_document(ctx, heavy_id, finished)
            normal = wait_document(ctx, normal_id, finished)
            assert http.get("/health").status_code == 200
            assert worker.proc is not None and worker.proc.poll() is None
        finally:
            worker.stop()

    assert heavy.parse_status == ParseStatus.FAILED, heavy.parse_status
    assert heavy.error is not None and "celery.worker_memory_ceiling_mb" in heavy.error
    assert f"{CEILING_MB} MB" in heavy.error
    assert heavy.chunk_count == 0
    assert heavy.deliveries <= own.ingest.max_deliveries
    assert normal.parse_status == ParseStatus.COMPLETED, normal.error
