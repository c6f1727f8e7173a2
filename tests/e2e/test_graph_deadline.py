"""A graph task's time limit under the threads pool, which enforces none of Celery's limits: a
chunk whose LLM answer comes after the task's soft limit fails with the reason and writes
nothing, while its sibling, answered in time, builds its graph and the document completes.
The threads worker runs under the memory ceiling as a whole."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select

from graphrag.db.engine import session_scope
from graphrag.db.enums import GraphStatus, ParseStatus
from graphrag.db.models import Chunk
from graphrag.extraction.models import ExtractConfig
from graphrag.graph.neo4j_client import connect_driver
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.ingest.processing import ProcessOutcome
from graphrag.kb.chunking import ChunkingConfig
from graphrag.kb.schemas import IndexingStrategy, KnowledgeBaseCreate
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.graph_helpers import graph_nodes, kb_graph_rule, remove_label
from tests.support.isolated_worker import (
    add_and_enqueue,
    core_context,
    finished,
    on_own_queues,
    own_database,
    wait_document,
)
from tests.support.services import data_dir
from tests.support.task_leases import process_document
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

TIME_LIMIT_S, MARGIN_S = 4, 2  # the soft limit, and so the task's deadline: 2 s
ANSWER_DELAY_S = 3.0  # past the deadline, within the hard limit and the LLM timeout
CEILING_MB = 3000
LIMITS = {
    "CELERY_GRAPH_TIME_LIMIT_S": str(TIME_LIMIT_S),
    "CELERY_GRAPH_SOFT_LIMIT_MARGIN_S": str(MARGIN_S),
    "CELERY_WORKER_MEMORY_CEILING_MB": str(CEILING_MB),
}


def _data_limit(pid: int) -> int:
    """The soft RLIMIT_DATA of a process, in bytes, from /proc."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max data size"):
            return int(line.split()[3])
    raise AssertionError("no data size limit line")


def test_a_graph_task_past_its_deadline_fails_under_the_threads_pool(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    from workers.celery_app import create_celery

    fresh_scripted_llm.set_rules(
        [
            kb_graph_rule(
                "SLOWPOKE",
                [{"name": "Late Heron", "attributes": []}],
                [],
                fault={"delay_s": ANSWER_DELAY_S},
            ),
            kb_graph_rule("PROMPT", [{"name": "Early Swift", "attributes": []}], []),
        ],
        default={"content": "none"},
    )
    moved, env = on_own_queues(settings, settings_env)
    with own_database(services_env["DATABASE_URL"], moved, env) as (own, env, sessions):
        celery = create_celery(own)
        celery.control.purge()
        driver = connect_driver(own.neo4j)
        ctx = core_context(own, sessions, Neo4jGraphStore(driver, own.neo4j))
        log = data_dir() / "test-logs" / "worker-graph-deadline.log"
        worker = WorkerProcess(
            {**env, **LIMITS}, log, concurrency=0, queues=[own.celery.graph_queue]
        )
        worker.start(celery)
        try:
            kb = KnowledgeBaseCreate(
                name=f"kb-{uuid.uuid4().hex[:8]}",
                chunking=ChunkingConfig(chunk_size=50, chunk_overlap=0, separators=["\n\n"]),
                indexing=IndexingStrategy(graph_enabled=True),
                extract_config=ExtractConfig(enabled=True),
            )
            text = f"SLOWPOKE. A late heron.\n\nPROMPT. An early swift {uuid.uuid4().hex[:8]}."
            kb_id, doc_id = add_and_enqueue(ctx, text.encode(), "birds.md", kb)
            # Parsed here; the graph worker's relay sends the chunk tasks to its threads.
            assert process_document(ctx, doc_id, 1) is ProcessOutcome.INDEXED
            doc = wait_document(ctx, doc_id, finished)
            assert worker.proc is not None
            data_limit = _data_limit(worker.proc.pid)  # the worker runs the tasks' threads
        finally:
            worker.stop()
        with session_scope(sessions) as session:
            chunks = session.execute(
                select(Chunk.content, Chunk.graph_status, Chunk.graph_error)
                .where(Chunk.knowledge_id == doc_id)
                .order_by(Chunk.seq)
            ).all()
        nodes = graph_nodes(driver, str(doc_id))
        remove_label(driver, str(kb_id))
        driver.close()

    assert "pool threads" in log.read_text()  # the pool that enforces no Celery time limit
    assert data_limit == CEILING_MB * 1024 * 1024
    assert doc.parse_status == ParseStatus.COMPLETED and doc.failed_chunk_count == 1
    (slow, slow_status, slow_error), (_, quick_status, _) = chunks
    assert "SLOWPOKE" in slow and slow_status == GraphStatus.FAILED
    assert slow_error == f"extraction exceeded its time limit ({TIME_LIMIT_S - MARGIN_S} s)"
    assert quick_status == GraphStatus.DONE
    assert set(nodes) == {"Early Swift"}
    calls = fresh_scripted_llm.requests("/v1/chat/completions")
    assert sum("SLOWPOKE" in json.dumps(call.body) for call in calls) == 1  # not retried
