"""Chaos: a decompression bomb whose worker is SIGKILLed twice, a parse that outlives the soft
time limit and a normal document, through worker processes of the test's own. The bomb and the
slow parse end `failed` with their reasons, the normal document `completed`, the queue empty,
and a late redelivery of the bomb changes nothing."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

import pytest
import redis
from celery import Celery
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.enums import ParseStatus
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
    read_document,
    wait_document,
)
from tests.support.services import data_dir
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

BOMB_MIB = 1024  # inflated size of the bomb's document.xml (about 1 MiB on disk)
SLOW_PAGES = 12  # scanned pages: OCR takes far longer than the soft limit
# document.process limits of these workers: soft limit 4 s, hard limit 60 s.
LIMITS = {"CELERY_DOCPARSE_TIME_LIMIT_S": "60", "CELERY_DOCPARSE_SOFT_LIMIT_MARGIN_S": "56"}
# The first worker reads DOCX files whatever their inflated size: the bomb gets decoded.
NO_DOCX_BUDGET = {
    "INGEST_DOCX_MAX_ENTRY_BYTES": str(1 << 40),
    "INGEST_DOCX_MAX_TOTAL_BYTES": str(1 << 40),
    "INGEST_DOCX_MAX_RATIO": "1e12",
}
POLL_S = 0.01
KILL_WAIT_S = 120.0


def _children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


def _wait_delivery(ctx: IngestContext, doc_id: uuid.UUID, count: int) -> None:
    """Until the document's run number `count` has claimed it (and is decoding it)."""
    deadline = time.monotonic() + KILL_WAIT_S
    while True:
        doc = read_document(ctx, doc_id)
        if doc.deliveries >= count and doc.parse_status == ParseStatus.PROCESSING:
            return
        assert doc.parse_status == ParseStatus.PENDING or doc.deliveries < count, doc.error
        assert time.monotonic() < deadline, f"run {count} never started"
        time.sleep(POLL_S)


def _kill_pool_child(victim: WorkerProcess) -> None:
    """SIGKILL the pool process running the task, like the kernel's out-of-memory killer."""
    assert victim.proc is not None
    (child,) = _children(victim.proc.pid)
    os.kill(child, signal.SIGKILL)


def _queue_length(url: str, queue: str) -> int:
    return int(redis.Redis.from_url(url).llen(queue))


def test_bomb_killing_its_worker_twice_ends_failed_and_the_rest_completes(
    settings: Settings, settings_env: dict[str, str], services_env: dict[str, str]
) -> None:
    moved, env = on_own_queues(settings, settings_env)
    with own_database(services_env["DATABASE_URL"], moved, env) as (own, env, sessions):
        _chaos(own, env, sessions)


def _chaos(own: Settings, env: dict[str, str], session_factory: sessionmaker[Session]) -> None:
    from workers.celery_app import create_celery

    celery: Celery = create_celery(own)
    celery.control.purge()
    ctx = core_context(own, session_factory, DisabledGraphStore())
    log = data_dir() / "test-logs" / "worker-chaos.log"
    bomb = sample_files.docx_bomb(BOMB_MIB)
    slow = sample_files.scanned_pdf(
        [[f"SLOW PAGE {i}", "harbour cranes"] for i in range(SLOW_PAGES)]
    )

    victim = WorkerProcess({**env, **LIMITS, **NO_DOCX_BUDGET}, log, concurrency=1)
    victim.start(celery)
    try:
        _, bomb_id = add_and_enqueue(ctx, bomb, "bomb.docx")
        _, slow_id = add_and_enqueue(ctx, slow, "slow.pdf")
        _, normal_id = add_and_enqueue(ctx, f"A normal note {uuid.uuid4()}".encode(), "n.txt")
        _wait_delivery(ctx, bomb_id, 1)
        _kill_pool_child(victim)  # the pool replaces it; the message comes back at once
        _wait_delivery(ctx, bomb_id, 2)
    finally:
        victim.kill()  # the whole worker this time: the message stays unacknowledged

    survivor = WorkerProcess({**env, **LIMITS}, log, concurrency=1)
    survivor.start(celery)
    try:
        normal = wait_document(ctx, normal_id, finished)
        slowed = wait_document(ctx, slow_id, finished)
        report = reconcile(ctx, stuck_after_s=0)  # the sweep finds the bomb stuck mid-parse
        assert bomb_id in report.reprocessed
        failed = wait_document(ctx, bomb_id, finished)
        # A late copy of the bomb's message (the killed worker's, restored) changes nothing; a
        # document queued behind it shows when it has been handled (one process, FIFO queue).
        celery.send_task("document.process", args=[str(bomb_id), 1])
        _, behind_id = add_and_enqueue(ctx, f"Queued behind {uuid.uuid4()}".encode(), "b.txt")
        behind = wait_document(ctx, behind_id, finished)
        after = reconcile(ctx, stuck_after_s=0)
    finally:
        survivor.stop()

    assert normal.parse_status == ParseStatus.COMPLETED and normal.chunk_count == 1
    assert behind.parse_status == ParseStatus.COMPLETED
    assert slowed.parse_status == ParseStatus.FAILED
    assert "time limit" in (slowed.error or ""), slowed.error
    assert failed.parse_status == ParseStatus.FAILED
    assert "word/document.xml would inflate" in (failed.error or ""), failed.error
    assert failed.deliveries == 3 and failed.chunk_count == 0
    again = read_document(ctx, bomb_id)
    assert (again.parse_status, again.deliveries) == (ParseStatus.FAILED, 3)
    assert bomb_id not in after.reprocessed + after.failed
    assert _queue_length(own.redis.url, own.celery.docparse_queue) == 0
