"""A small document uploaded after a large one does not wait for the large one's graph: the relay
keeps a bounded number of graph tasks in flight and picks them round-robin across documents.

A 5,000-chunk document is enqueued first, then a 2-chunk one: the small one completes while
the large one still has most of its chunks pending, and the large document's chunks that reach
the LLM between the small one's tasks being written and its last call are counted (the scripted
server's request log, in arrival order): a count of tasks ahead of it, not a stopwatch.

The workers are split as production runs them (docparse in a prefork pool, graph in threads
sized to the LLM's slots), so the small document's parse never queues behind graph work."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from neo4j import Driver

from graphrag.db.engine import session_scope
from graphrag.db.enums import ParseStatus
from graphrag.extraction.models import ExtractConfig
from graphrag.ingest.documents import request_cancel
from graphrag.kb.schemas import IndexingStrategy, KnowledgeBaseCreate
from graphrag.settings import Settings
from tests.fakes.llm_script import RecordedRequest
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.graph_helpers import remove_label
from tests.support.isolated_worker import add_and_enqueue, finished, read_document, wait_document
from tests.support.split_workers import split_workers
from workers.pool import graph_threads

pytestmark = pytest.mark.e2e

BIG_CHUNKS = 5000
SMALL_CHUNKS = 2
SLOTS = 4
LLM_DELAY_S = 0.5  # each graph call holds its slot this long: the large one's graph lasts 10 min
WAIT_S = 120.0
POLL_S = 0.02  # well under LLM_DELAY_S: the small document's graph stage cannot be missed
EMPTY_GRAPH: dict[str, list[object]] = {"nodes": [], "relations": []}
CHAT = "/v1/chat/completions"
# The large document passes the default graph budget; its embeddings come from the scripted
# server (deterministic vectors), so parsing 5,000 chunks stays quick on a loaded machine.
WORKER_ENV = {"INGEST_GRAPH_MAX_CHUNKS": str(BIG_CHUNKS), "EMBEDDING_BACKEND": "openai"}


def _text(prefix: str, paragraphs: int) -> bytes:
    # Each paragraph is over half the chunk size, so each one is a chunk of its own.
    return "\n\n".join(
        f"{prefix} paragraph {i:04d} has words enough to fill a chunk." for i in range(paragraphs)
    ).encode()


def _kb() -> KnowledgeBaseCreate:
    return KnowledgeBaseCreate(
        name=f"fair-{uuid.uuid4().hex[:8]}",
        chunking={"chunk_size": 80, "chunk_overlap": 0, "separators": ["\n\n"]},
        indexing=IndexingStrategy(graph_enabled=True),
        extract_config=ExtractConfig(enabled=True, tags=["knows"]),
    )


def _large_settings(settings: Settings) -> Settings:
    ingest = settings.ingest.model_copy(update={"graph_max_chunks": BIG_CHUNKS})
    embedding = settings.embedding.model_copy(update={"backend": "openai"})
    return settings.model_copy(update={"ingest": ingest, "embedding": embedding})


def _is_small(request: RecordedRequest) -> bool:
    return "small paragraph" in str(request.body)


@pytest.fixture()
def slow_server() -> Iterator[ScriptedLlmServer]:
    with ScriptedLlmServer() as server:
        server.set_script(
            {
                "slots": SLOTS,
                "latency_s": LLM_DELAY_S,
                "models": ["scripted"],
                "default": {"content": EMPTY_GRAPH},
            }
        )
        yield server


def test_small_document_finishes_while_the_large_one_still_extracts(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    neo4j_driver: Driver,
    slow_server: ScriptedLlmServer,
) -> None:
    with split_workers(
        _large_settings(settings),
        {**settings_env, **WORKER_ENV},
        services_env,
        neo4j_driver,
        slow_server,
        "fairness",
    ) as (ctx, _):
        big_kb, big = add_and_enqueue(ctx, _text("big", BIG_CHUNKS), "big.md", _kb())
        deadline = time.monotonic() + WAIT_S
        while read_document(ctx, big).parse_status != ParseStatus.FINALIZING:
            assert time.monotonic() < deadline, "the large document never reached the graph stage"
            time.sleep(POLL_S)
        started = read_document(ctx, big)
        assert started.chunk_count == BIG_CHUNKS
        # Past the default graph budget: the raised one is in force in the workers.
        assert started.pending_subtasks_count > settings.ingest.graph_max_chunks
        small_kb, small = add_and_enqueue(ctx, _text("small", SMALL_CHUNKS), "small.md", _kb())

        # Where the LLM's request log stood when the small document's graph rows were written
        # (seen late at worst, which only lowers the count of calls ahead of it).
        deadline = time.monotonic() + WAIT_S
        parsing = (ParseStatus.PENDING, ParseStatus.PROCESSING)
        while read_document(ctx, small).parse_status in parsing:
            assert time.monotonic() < deadline, "the small document never parsed"
            time.sleep(POLL_S)
        written_at = len(slow_server.requests(CHAT))

        done = wait_document(ctx, small, finished, timeout_s=WAIT_S)
        big_then = read_document(ctx, big)
        calls = slow_server.requests(CHAT)
        assert done.parse_status == ParseStatus.COMPLETED, done.error
        assert done.chunk_count == SMALL_CHUNKS
        last_small = max(i for i, request in enumerate(calls) if _is_small(request))
        ahead = sum(not _is_small(request) for request in calls[written_at:last_small])
        # In first-come order the small one would wait for every chunk of the large one; fairly,
        # it waits for the tasks in flight when its rows were written (`outbox.graph_in_flight`),
        # one large task the round-robin sends beside each of its own, and those the graph
        # worker's threads already hold while waiting for an LLM slot.
        threads = graph_threads(ctx.settings, SLOTS)
        bound = ctx.settings.outbox.graph_in_flight + SMALL_CHUNKS + threads
        assert ahead <= bound, (ahead, bound)
        assert big_then.parse_status == ParseStatus.FINALIZING
        assert big_then.pending_subtasks_count > BIG_CHUNKS // 2  # most of it still waits
        with session_scope(ctx.sessions) as session:
            cancelled = request_cancel(session, big_then.tenant_id, big)
        assert cancelled.parse_status == ParseStatus.CANCELLED
    for kb_id in (big_kb, small_kb):
        remove_label(neo4j_driver, str(kb_id))
