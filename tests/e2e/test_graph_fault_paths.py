"""Every way a graph task can fail settles its chunk and the document still completes:
permanent faults (a 400 from the LLM, a lone surrogate in the model's JSON, a Neo4j client
error) fail the chunk at once with the reason; a wait for an LLM slot that times out is retried
with backoff until a slot frees."""

from __future__ import annotations

import json
import threading
import time
import uuid
from contextlib import ExitStack

import httpx
import pytest
import redis
from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.enums import ParseStatus
from graphrag.extraction.models import ExtractConfig
from graphrag.graph.labels import entity_label
from graphrag.graph.neo4j_client import connect_driver
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.kb.chunking import ChunkingConfig
from graphrag.kb.schemas import IndexingStrategy, KnowledgeBaseCreate
from graphrag.llm.concurrency import background_limiter
from graphrag.llm.server_info import slot_limit
from graphrag.settings import Settings
from tests.e2e.test_graph_build import document_text, graph_kb, script_extractions
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import all_chunks, upload, wait_terminal
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
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

SLOT_HELD_S = 3.0


def _calls_for(llm: ScriptedLlmServer, marker: str) -> int:
    return sum(1 for r in llm.requests("/v1/chat/completions") if marker in json.dumps(r.body))


def _bravo_fails_once(
    http: httpx.Client, llm: ScriptedLlmServer, driver: Driver, reason: str
) -> None:
    """Upload the three-part document: its BRAVO chunk fails after one call with `reason`, the
    document completes, and the other chunks' graph stands."""
    kb = graph_kb(http)
    doc = wait_terminal(http, upload(http, kb["id"], "f.md", document_text().encode()).json()["id"])
    assert doc["parse_status"] == "completed", doc
    assert doc["failed_chunk_count"] == 1 and doc["pending_subtasks_count"] == 0
    failed = [c for c in all_chunks(http, doc["id"]) if c["graph_status"] == "failed"]
    assert len(failed) == 1 and failed[0]["content"].startswith("BRAVO")
    assert reason in failed[0]["graph_error"]
    assert _calls_for(llm, "BRAVO.") == 1
    assert "Ada Moreau" in graph_nodes(driver, doc["id"])
    remove_label(driver, kb["id"])


def test_llm_bad_request_fails_the_chunk_without_retry(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    script_extractions(fresh_scripted_llm, BRAVO={"status": 400})
    _bravo_fails_once(http, fresh_scripted_llm, neo4j_driver, "refused the request (400)")


def test_lone_surrogate_in_model_json_fails_the_chunk_without_retry(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    script_extractions(fresh_scripted_llm)
    rules = [r.model_dump(exclude_none=True) for r in fresh_scripted_llm.state.script.rules]
    # The model's JSON text escapes half a surrogate pair: valid JSON, text Neo4j cannot store.
    broken = '{"nodes": [{"name": "Harbor \\ud800 Logistics", "attributes": []}], "relations": []}'
    surrogate = {"name": "surrogate", "match": {"user": {"contains": "BRAVO."}}}
    fresh_scripted_llm.set_rules(
        [{**surrogate, "reply": {"content": broken}}, *rules], default={"content": "none"}
    )
    _bravo_fails_once(http, fresh_scripted_llm, neo4j_driver, "cannot be encoded")


def test_neo4j_client_error_fails_the_chunk_without_retry(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    script_extractions(fresh_scripted_llm)
    kb = graph_kb(http)
    first = wait_terminal(
        http, upload(http, kb["id"], "a.md", document_text().encode()).json()["id"]
    )
    assert first["parse_status"] == "completed" and first["failed_chunk_count"] == 0
    # A constraint the second document's merge of the same names violates: a ClientError.
    # (It takes the place of the base's name index, which covers the same property.)
    constraint = f"unique_{uuid.uuid4().hex}"
    label = entity_label(kb["id"])
    neo4j_driver.execute_query(f"DROP INDEX name_{label} IF EXISTS")
    neo4j_driver.execute_query(
        f"CREATE CONSTRAINT {constraint} FOR (n:{label}) REQUIRE n.name IS UNIQUE"
    )
    try:
        marker = f"copy {uuid.uuid4().hex[:8]}"
        text = f"ALPHA. Ada Moreau founded Northwind Robotics in Lyon, {marker}."
        second = wait_terminal(http, upload(http, kb["id"], "b.md", text.encode()).json()["id"])
    finally:
        neo4j_driver.execute_query(f"DROP CONSTRAINT {constraint}")
    assert second["parse_status"] == "completed" and second["failed_chunk_count"] == 1
    (chunk,) = all_chunks(http, second["id"])
    assert chunk["graph_status"] == "failed" and "graph write refused" in chunk["graph_error"]
    assert _calls_for(fresh_scripted_llm, marker) == 1
    assert graph_nodes(neo4j_driver, second["id"]) == {}
    remove_label(neo4j_driver, kb["id"])


def test_llm_slot_wait_timeout_is_retried_until_a_slot_frees(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    moved, env = on_own_queues(settings, settings_env)
    with own_database(services_env["DATABASE_URL"], moved, env) as (own, env, sessions):
        _slots_held_then_freed(own, env, sessions, fresh_scripted_llm)


def _slots_held_then_freed(
    own: Settings,
    env: dict[str, str],
    session_factory: sessionmaker[Session],
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    from workers.celery_app import create_celery

    env = {**env, "LLM_CONCURRENCY_WAIT_S": "0.5"}
    celery = create_celery(own)
    celery.control.purge()
    fresh_scripted_llm.set_rules(
        [kb_graph_rule("SLOT", [{"name": "Slot Keeper", "attributes": []}], [])],
        default={"content": "none"},
    )
    driver = connect_driver(own.neo4j)
    ctx = core_context(own, session_factory, Neo4jGraphStore(driver, own.neo4j))
    limit = slot_limit(own.llm)  # what the worker reads too (the fallback: no /props here)
    slots = background_limiter(redis.Redis.from_url(own.redis.url), own.llm, limit)
    # Every slot held (and renewed, as a running call's) by a thread until `freed` is set.
    taken, freed = threading.Event(), threading.Event()

    def hold() -> None:
        with ExitStack() as stack:
            for _ in range(limit):
                stack.enter_context(slots.slot())
            taken.set()
            freed.wait()

    holder = threading.Thread(target=hold, name="slot-holder")
    holder.start()
    assert taken.wait(own.llm.concurrency_wait_s)
    release = threading.Timer(SLOT_HELD_S, freed.set)
    proc = WorkerProcess(env, data_dir() / "test-logs" / "worker-slots.log", concurrency=1)
    proc.start(celery)
    try:
        kb = KnowledgeBaseCreate(
            name=f"kb-{uuid.uuid4().hex[:8]}",
            chunking=ChunkingConfig(chunk_size=200, chunk_overlap=0, separators=["\n\n"]),
            indexing=IndexingStrategy(graph_enabled=True),
            extract_config=ExtractConfig(enabled=True),
        )
        started = time.monotonic()
        release.start()
        kb_id, doc_id = add_and_enqueue(
            ctx, f"SLOT. Held slots {uuid.uuid4()}.".encode(), "s.md", kb
        )
        doc = wait_document(ctx, doc_id, finished)
    finally:
        release.cancel()
        freed.set()
        holder.join()
        proc.stop()
    assert time.monotonic() - started >= SLOT_HELD_S
    assert doc.parse_status == ParseStatus.COMPLETED and doc.failed_chunk_count == 0
    assert "Slot Keeper" in graph_nodes(driver, str(doc_id))
    remove_label(driver, str(kb_id))
    driver.close()
