"""`graphrag worker` with no options runs the fast layout: a graph worker on threads sized to
the LLM's slots and a worker of every other queue, in one command. The scripted server sees as
many requests at once as it has slots, every queue has a consumer, and a stop ends both."""

from __future__ import annotations

import json
import uuid

import pytest
from neo4j import Driver

from graphrag.db.enums import ParseStatus
from graphrag.extraction.models import ExtractConfig
from graphrag.kb.schemas import IndexingStrategy, KnowledgeBaseCreate
from graphrag.settings import Settings
from tests.e2e.test_graph_slots import CHUNKS, _document
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.graph_helpers import remove_label
from tests.support.isolated_worker import add_and_enqueue, finished, wait_document
from tests.support.slot_server import SLOTS
from tests.support.split_workers import fast_layout

pytestmark = pytest.mark.e2e


def test_one_command_fills_the_slots_and_covers_every_queue(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    neo4j_driver: Driver,
    slot_server: ScriptedLlmServer,
) -> None:
    marker = f"LAYOUT{uuid.uuid4().hex[:6]}"
    kb = KnowledgeBaseCreate(
        name=f"layout-{uuid.uuid4().hex[:8]}",
        chunking={"chunk_size": 80, "chunk_overlap": 0, "separators": ["\n\n"]},
        indexing=IndexingStrategy(graph_enabled=True),
        extract_config=ExtractConfig(enabled=True),
    )
    with fast_layout(settings, settings_env, services_env, neo4j_driver, slot_server) as (
        ctx,
        celery,
        proc,
    ):
        consumed = celery.control.inspect(timeout=2.0).active_queues() or {}
        kb_id, doc_id = add_and_enqueue(ctx, _document(marker), "layout.md", kb)
        doc = wait_document(ctx, doc_id, finished)
    assert proc.returncode is not None  # the stop ended the command and both workers
    assert doc.parse_status == ParseStatus.COMPLETED, doc.error
    assert slot_server.slot_stats().peak_active == SLOTS  # threads sized to the slots
    chats = [
        r for r in slot_server.requests("/v1/chat/completions") if marker in json.dumps(r.body)
    ]
    assert len(chats) == CHUNKS
    by_node = {node: {q["name"] for q in queues} for node, queues in consumed.items()}
    celery_settings = ctx.settings.celery
    graph_nodes = [n for n, names in by_node.items() if names == {celery_settings.graph_queue}]
    assert len(by_node) == 2 and len(graph_nodes) == 1, by_node
    assert set().union(*by_node.values()) == set(celery_settings.queues)
    remove_label(neo4j_driver, str(kb_id))
