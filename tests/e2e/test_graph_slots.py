"""The graph queue at the speed of the LLM server: a graph-only worker sizes its threads by the
slots the server reports, the server sees that many requests at once and never more, and a
document's LLM calls and tokens are what the server answered for it."""

from __future__ import annotations

import json
import re
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
import redis
from neo4j import Driver

from graphrag.db.enums import ParseStatus
from graphrag.extraction.models import ExtractConfig
from graphrag.graph.factory import build_graph_store
from graphrag.ingest.context import IngestContext
from graphrag.kb.schemas import IndexingStrategy, KnowledgeBaseCreate
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.graph_helpers import remove_label
from tests.support.isolated_worker import (
    add_and_enqueue,
    core_context,
    finished,
    on_own_queues,
    on_redis_db,
    own_database,
    wait_document,
)
from tests.support.services import data_dir
from tests.support.worker import WorkerProcess
from workers.scope import llm_slots_key

pytestmark = pytest.mark.e2e

SLOTS = 4
CHUNKS = 8
HOLD_S = 0.5
SLOTS_REDIS_DB = 2  # outside the range the session fixtures pick from; the queues are the test's
REPLY = {"nodes": [{"name": "Slot Test Entity", "attributes": []}], "relations": []}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


@pytest.fixture()
def slot_server() -> Iterator[ScriptedLlmServer]:
    with ScriptedLlmServer() as server:
        server.set_script(
            {
                "slots": SLOTS,
                "latency_s": HOLD_S,
                "models": ["scripted"],
                "default": {"content": REPLY},
            }
        )
        yield server


@contextmanager
def _started(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    neo4j_driver: Driver,
    llm: ScriptedLlmServer,
    threads: int = 0,
    graph_env: dict[str, str] | None = None,
) -> Iterator[tuple[IngestContext, int]]:
    """A docparse worker (prefork) and a graph worker (`graphrag worker --queues graph`, its
    threads chosen by the worker unless `threads`) on a Redis database and a PostgreSQL database
    of their own (their relays send this test's outbox rows, no other worker's)."""
    from workers.celery_app import create_celery

    moved, env = on_own_queues(*on_redis_db(settings, settings_env, SLOTS_REDIS_DB))
    with own_database(services_env["DATABASE_URL"], moved, env) as (own_settings, env, sessions):
        env = {
            **env,
            "LLM_BASE_URL": llm.openai_base_url,
            "EMBEDDING_BASE_URL": llm.openai_base_url,
        }
        celery = create_celery(own_settings)
        celery.control.purge()
        # Leases left by an interrupted earlier run would hold slots until they expire.
        redis.Redis.from_url(own_settings.redis.url).delete(llm_slots_key(own_settings))
        ctx = core_context(own_settings, sessions, build_graph_store(own_settings, neo4j_driver))
        logs = data_dir() / "test-logs"
        port = _free_port()
        c = own_settings.celery
        docparse = WorkerProcess(env, logs / "worker-slots-docparse.log", 1, [c.docparse_queue])
        graph_worker = WorkerProcess(
            {**env, "METRICS_WORKER_PORT": str(port), **(graph_env or {})},
            logs / "worker-slots-graph.log",
            threads,
            queues=[c.graph_queue],
        )
        started: list[WorkerProcess] = []
        try:
            for proc in (docparse, graph_worker):
                proc.start(celery)
                started.append(proc)
            yield ctx, port
        finally:
            for proc in started:
                proc.stop()


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
    with _started(settings, settings_env, services_env, neo4j_driver, slot_server) as (ctx, port):
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
    with _started(
        settings,
        settings_env,
        services_env,
        neo4j_driver,
        slot_server,
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
