"""Documents/min through the Celery queue and a real worker, against inline processing.

Both sides add the same files into a fresh database (each into a knowledge base of its own, so
neither sees the other's files as duplicates): the queue side with
`graphrag.ingest.batch.submit_files` (outbox rows the worker's relay sends), the inline side with
the same `add_document` followed by `process_document` in this thread, the outbox row the add
writes taken back in its transaction (the worker's relay must not send it as well).
The database, the stored files and the queue's Redis database are the benchmark's own and are
cleaned up at the end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from bench.harness import median, print_ratio, services_env
from bench.sample_text import paragraphs
from graphrag.db.engine import make_engine, make_session_factory, session_scope
from graphrag.db.enums import KnowledgeSource, ParseStatus
from graphrag.db.migrate import upgrade_to_head
from graphrag.db.outbox import TaskLease
from graphrag.db.outbox import process_document as process_request
from graphrag.graph.store import DisabledGraphStore
from graphrag.ingest.batch import ensure_kb_by_name, poll_states, submit_files
from graphrag.ingest.context import IngestContext
from graphrag.ingest.documents import NewDocument, add_document
from graphrag.ingest.processing import process_document
from graphrag.ingest.storage import FileStorage
from graphrag.search.embeddings import build_embedder
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant
from tests.support.sample_files import text_pdf
from tests.support.services import create_database, data_dir, drop_database
from tests.support.worker import WorkerProcess

__all__ = ["QueueBenchConfig", "run_queue_bench"]

_POLL_S = 0.05  # status polling step; small against a document's processing time
_PING_S = 1.0  # how long to listen for a worker already on the benchmark's Redis database
_WORKER_LOG = data_dir() / "bench-logs" / "ingest-worker.log"  # kept for a failed run


@dataclass(frozen=True)
class QueueBenchConfig:
    docs: int
    doc_pages: int
    page_chars: int
    rounds: int
    concurrency: int
    redis_db: int
    timeout_s: float


class InlineSubmitter:
    """Adds each file and processes it at once, in the caller's thread (no outbox, no worker)."""

    def __init__(self, ctx: IngestContext) -> None:
        self.ctx = ctx

    def __call__(self, kb_id: uuid.UUID, paths: Sequence[Path]) -> list[uuid.UUID]:
        ids = []
        for path in paths:
            new = NewDocument(
                data=path.read_bytes(),
                file_name=path.name,
                media_type=None,
                source=KnowledgeSource.FILE,
            )
            with session_scope(self.ctx.sessions) as session:
                tenant = ensure_tenant(session, self.ctx.settings.api.default_tenant)
                doc = add_document(session, self.ctx.settings, self.ctx.storage, tenant, kb_id, new)
                lease = TaskLease.of(process_request(doc.id, doc.attempt))
                lease.settle(session)
            process_document(self.ctx, doc.id, doc.attempt, lease)
            ids.append(doc.id)
        return ids


Submit = Callable[[uuid.UUID, Sequence[Path]], list[uuid.UUID]]


def _write_documents(folder: Path, prefix: str, count: int, config: QueueBenchConfig) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        pages = [paragraphs(f"{prefix}{i}p{p}", config.page_chars) for p in range(config.doc_pages)]
        path = folder / f"{prefix}-{i}.pdf"
        path.write_bytes(text_pdf(pages))
        paths.append(path)
    return paths


def _bench_env(
    env: dict[str, str], database_url: str, workdir: Path, redis_db: int
) -> dict[str, str]:
    redis_url = env["REDIS_URL"].rsplit("/", 1)[0] + f"/{redis_db}"
    return {
        **env,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "NEO4J_ENABLE": "false",
        "STORAGE_DIR": str(workdir / "files"),
    }


class _Run:
    """One benchmark's services: its database, storage, both queues and the worker process."""

    def __init__(self, settings: Settings, sessions: sessionmaker[Session]) -> None:
        self.settings = settings
        self.sessions = sessions
        self.storage = FileStorage(settings.resolve(settings.storage_dir))
        self.graph = DisabledGraphStore()

    def through_outbox(self, kb_id: uuid.UUID, paths: Sequence[Path]) -> list[uuid.UUID]:
        submitted = submit_files(self.sessions, self.settings, self.storage, kb_id, paths)
        refused = [s.error for s in submitted if s.error or s.knowledge_id is None]
        if refused:
            raise SystemExit(f"uploads refused: {refused}")
        return [s.knowledge_id for s in submitted if s.knowledge_id is not None]

    def submit_and_wait(
        self, submit: Submit, kb_name: str, paths: list[Path], timeout_s: float
    ) -> float:
        """Seconds from the first upload until every document is terminal (all completed)."""
        kb_id = ensure_kb_by_name(
            self.sessions, self.settings, self.graph, kb_name, graph_enabled=False
        )
        start = time.perf_counter()
        ids = submit(kb_id, paths)
        deadline = start + timeout_s
        while True:
            states = poll_states(self.sessions, ids)
            if all(s.terminal for s in states):
                break
            if time.perf_counter() > deadline:
                raise SystemExit(f"documents still working after {timeout_s}s")
            time.sleep(_POLL_S)
        elapsed = time.perf_counter() - start
        failed = [s for s in states if s.status is not ParseStatus.COMPLETED]
        if failed:
            raise SystemExit(f"{len(failed)} documents did not complete: {failed[0].error}")
        return elapsed


def _inline_submitter(run: _Run) -> InlineSubmitter:
    embedder = build_embedder(run.settings.embedding)
    embedder.embed(["warm-up"])  # model load is a per-process start cost, not per document
    return InlineSubmitter(
        IngestContext(
            settings=run.settings,
            sessions=run.sessions,
            storage=run.storage,
            embedder=embedder,
            graph=run.graph,
        )
    )


def _measure(run: _Run, env: dict[str, str], workdir: Path, config: QueueBenchConfig) -> None:
    from workers.celery_app import create_celery

    docs = _write_documents(workdir / "docs", "doc", config.docs, config)
    warmup = _write_documents(workdir / "warmup", "warm", 2 * config.concurrency, config)
    celery = create_celery(run.settings)
    if celery.control.ping(timeout=_PING_S):
        busy = f"a worker already listens on Redis db {config.redis_db}"
        raise SystemExit(f"{busy}; pick another with --redis-db")
    celery.control.purge()
    worker = WorkerProcess(env, _WORKER_LOG, concurrency=config.concurrency)
    worker.start(celery)
    try:
        queue = run.through_outbox
        # Each worker child loads the embedder on its first task: keep that out of the timing.
        run.submit_and_wait(queue, "bench-warmup", warmup, config.timeout_s)
        inline = _inline_submitter(run)
        inline_s, queue_s = [], []
        for r in range(config.rounds):
            inline_s.append(run.submit_and_wait(inline, f"inline-{r}", docs, config.timeout_s))
            queue_s.append(run.submit_and_wait(queue, f"queue-{r}", docs, config.timeout_s))
    finally:
        worker.stop()
        celery.control.purge()
    inline_rate = 60 * config.docs / median(inline_s)
    queue_rate = 60 * config.docs / median(queue_s)
    print_ratio(
        "queue_docs_per_min",
        f"celery_worker_c{config.concurrency}",
        "inline_sequential",
        queue_rate / inline_rate,
        f"n={config.rounds} rounds x {config.docs} docs of {config.doc_pages} page(s), medians: "
        f"queue {queue_rate:.1f} docs/min, inline {inline_rate:.1f} docs/min",
    )


def run_queue_bench(config: QueueBenchConfig) -> None:
    """Set up a fresh database and Redis database, measure both ways, clean everything up."""
    workdir = Path(tempfile.mkdtemp(prefix="graphrag-bench-"))
    services = services_env()
    database_url = create_database(services["DATABASE_URL"], "graphrag_bench")
    engine = None
    try:
        env = _bench_env(services, database_url, workdir, config.redis_db)
        os.environ.update(env)  # this process's Settings read the same values as the worker's
        settings = Settings()  # fields come from the YAML and env sources
        upgrade_to_head(settings)
        engine = make_engine(settings)
        _measure(_Run(settings, make_session_factory(engine)), env, workdir, config)
    finally:
        if engine is not None:
            engine.dispose()
        drop_database(database_url)
        shutil.rmtree(workdir, ignore_errors=True)
