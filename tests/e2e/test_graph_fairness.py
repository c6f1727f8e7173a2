"""A small document uploaded after a large one does not wait for the large one's graph: the relay
keeps a bounded number of graph tasks in flight and picks them round-robin across documents.

The workers are split as production runs them (docparse in a prefork pool, graph in threads
sized to the LLM's slots), so the small document's parse never queues behind graph work."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from neo4j import Driver

from graphrag.db.enums import ParseStatus
from graphrag.extraction.models import ExtractConfig
from graphrag.kb.schemas import IndexingStrategy, KnowledgeBaseCreate
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.graph_helpers import remove_label
from tests.support.isolated_worker import add_and_enqueue, finished, read_document, wait_document
from tests.support.split_workers import split_workers

pytestmark = pytest.mark.e2e

BIG_CHUNKS = 80
SMALL_CHUNKS = 2
SLOTS = 4
LLM_DELAY_S = 0.5  # the large document's graph lasts BIG_CHUNKS / SLOTS * delay = 10 s
WAIT_S = 120.0
EMPTY_GRAPH: dict[str, list[object]] = {"nodes": [], "relations": []}


def _text(prefix: str, paragraphs: int) -> bytes:
    # Each paragraph is over half the chunk size, so each one is a chunk of its own.
    return "\n\n".join(
        f"{prefix} paragraph {i:03d} has words enough to fill a chunk." for i in range(paragraphs)
    ).encode()


def _kb() -> KnowledgeBaseCreate:
    return KnowledgeBaseCreate(
        name=f"fair-{uuid.uuid4().hex[:8]}",
        chunking={"chunk_size": 80, "chunk_overlap": 0, "separators": ["\n\n"]},
        indexing=IndexingStrategy(graph_enabled=True),
        extract_config=ExtractConfig(enabled=True, tags=["knows"]),
    )


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
        settings, settings_env, services_env, neo4j_driver, slow_server, "fairness"
    ) as (ctx, _):
        big_kb, big = add_and_enqueue(ctx, _text("big", BIG_CHUNKS), "big.md", _kb())
        deadline = time.monotonic() + WAIT_S
        while read_document(ctx, big).parse_status != ParseStatus.FINALIZING:
            assert time.monotonic() < deadline, "the large document never reached the graph stage"
            time.sleep(0.05)
        small_kb, small = add_and_enqueue(ctx, _text("small", SMALL_CHUNKS), "small.md", _kb())

        done = wait_document(ctx, small, finished, timeout_s=WAIT_S)
        big_then = read_document(ctx, big)
        assert done.parse_status == ParseStatus.COMPLETED, done.error
        assert done.chunk_count == SMALL_CHUNKS
        # In first-come order the small one would wait for every chunk of the large one (the
        # large one would be completed by now); fairly, it waits for the graph tasks already in
        # flight when its own were written, a few rounds of `outbox.graph_in_flight`.
        assert big_then.parse_status == ParseStatus.FINALIZING
        assert ctx.settings.outbox.graph_in_flight < BIG_CHUNKS // 2
        assert big_then.pending_subtasks_count >= BIG_CHUNKS // 4
        last = wait_document(ctx, big, finished, timeout_s=WAIT_S)
        assert last.parse_status == ParseStatus.COMPLETED and last.failed_chunk_count == 0
    for kb_id in (big_kb, small_kb):
        remove_label(neo4j_driver, str(kb_id))
