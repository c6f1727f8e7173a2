"""The graph queue at the speed of the LLM server: a graph-only worker sizes its threads by the
slots the server reports, the server sees that many requests at once and never more, and a
document's LLM calls and tokens are what the server answered for it."""

from __future__ import annotations

import json
import re
import uuid

import httpx
import pytest
from neo4j import Driver

from graphrag.db.enums import ParseStatus
from graphrag.extraction.models import ExtractConfig
from graphrag.kb.schemas import IndexingStrategy, KnowledgeBaseCreate
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.graph_helpers import remove_label
from tests.support.isolated_worker import add_and_enqueue, finished, wait_document
from tests.support.slot_server import HOLD_S, SLOTS
from tests.support.split_workers import split_workers

pytestmark = pytest.mark.e2e

CHUNKS = 8


def _document(marker: str) -> bytes:
    paragraphs = [
        f"{marker} part {i}. Harbor crane number {i} lifts containers." for i in range(CHUNKS)
    ]
    return "\n\n".join(paragraphs).encode()


def _kb() -> KnowledgeBaseCreate:
    return KnowledgeBaseCreate(
        name=f"slots-{uuid.uuid4().hex[:8]}",
        chunking={"chunk_size": 80, "chunk_overlap": 0, "separators": ["\n\n"]},
        indexing=IndexingStrategy(graph_enabled=True),
        extract_config=ExtractConfig(enabled=True),
    )


def _sample(text: str, name: str, **labels: str) -> float | None:
    """One sample of the Prometheus text exposition, by name and exact labels."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        head, _, value = line.rpartition(" ")
        found = dict(re.findall(r'(\w+)="([^"]*)"', head))
        if head.split("{")[0] == name and found == labels:
            return float(value)
    return None


def test_graph_worker_fills_the_server_slots_and_accounts_for_every_call(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    neo4j_driver: Driver,
    slot_server: ScriptedLlmServer,
) -> None:
    marker = f"SLOTS{uuid.uuid4().hex[:6]}"
    with split_workers(
        settings, settings_env, services_env, neo4j_driver, slot_server, "slots"
    ) as (ctx, port):
        kb_id, doc_id = add_and_enqueue(ctx, _document(marker), "slots.md", _kb())
        doc = wait_document(ctx, doc_id, finished)
        scraped = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5.0).text
    assert doc.parse_status == ParseStatus.COMPLETED, doc.error
    stats = slot_server.slot_stats()
    # The worker read 4 slots from /props (and ran more threads than that): the server saw 4
    # requests at once, and none ever waited for a slot (received never exceeded the slots).
    assert stats.peak_active == SLOTS
    assert stats.peak_received == SLOTS
    chats = [
        r for r in slot_server.requests("/v1/chat/completions") if marker in json.dumps(r.body)
    ]
    assert len(chats) == CHUNKS == doc.llm_calls
    assert doc.llm_prompt_tokens == sum(r.usage["prompt_tokens"] for r in chats if r.usage)
    assert doc.llm_completion_tokens == sum(r.usage["completion_tokens"] for r in chats if r.usage)
    assert doc.llm_prompt_tokens > 0 and doc.graph_retries == 0
    assert doc.llm_seconds >= CHUNKS * HOLD_S * 0.9
    assert (
        _sample(scraped, "graphrag_tasks_total", task="graph.extract_chunk", state="succeeded")
        == CHUNKS
    )
    assert _sample(scraped, "graphrag_llm_request_seconds_count", model="scripted") == CHUNKS
    prompt = _sample(scraped, "graphrag_llm_tokens_total", model="scripted", kind="prompt")
    assert prompt == doc.llm_prompt_tokens
    assert _sample(scraped, "graphrag_queue_depth", queue=ctx.settings.celery.graph_queue) == 0
    remove_label(neo4j_driver, str(kb_id))


def test_configured_limit_caps_the_requests_below_the_threads(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    neo4j_driver: Driver,
    slot_server: ScriptedLlmServer,
) -> None:
    limit = 2
    with split_workers(
        settings,
        settings_env,
        services_env,
        neo4j_driver,
        slot_server,
        "slots-cap",
        threads=SLOTS,
        graph_env={"LLM_CONCURRENCY_LIMIT": str(limit)},
    ) as (ctx, _):
        kb_id, doc_id = add_and_enqueue(
            ctx, _document(f"CAP{uuid.uuid4().hex[:6]}"), "cap.md", _kb()
        )
        doc = wait_document(ctx, doc_id, finished)
    assert doc.parse_status == ParseStatus.COMPLETED, doc.error
    assert slot_server.slot_stats().peak_received == limit
    assert doc.llm_calls == CHUNKS
    remove_label(neo4j_driver, str(kb_id))
