"""Embeddings without a positive finite norm (an OpenAI-compatible server's zeros) are skipped
and counted, never sent to a vector index: a graph search answers 200, and chunk and memory
writes keep their rows without the vector."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from neo4j import Driver
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.models import Chunk, Knowledge
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.graph.store import DisabledGraphStore
from graphrag.kb.schemas import KnowledgeBaseCreate
from graphrag.memory.records import FactKind, MemoryOwner, NewFact
from graphrag.search.openai_embedder import OpenAiCompatibleEmbedder
from graphrag.settings import Settings
from tests.e2e.test_graph_build import document_text, graph_kb, script_extractions
from tests.fakes.llm_script import Script
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import upload, wait_terminal
from tests.support.graph_data import drop_kb_graph, graph
from tests.support.graph_helpers import remove_label
from tests.support.http_server import ThreadedServer
from tests.support.isolated_worker import add_and_enqueue, core_context, own_database
from tests.support.memory_helpers import ManualClock, memory_context
from tests.support.task_leases import process_document
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

MARKER = "Zzyzx"  # any embedding input holding it comes back all zeros


def _zeros_for_marker(llm: ScriptedLlmServer) -> None:
    script = llm.state.script
    llm.set_script(Script.model_validate({**dict(script), "zero_embeddings": {"contains": MARKER}}))


def _remote_embeddings(settings: Settings) -> Settings:
    embedding = settings.embedding.model_copy(update={"backend": "openai"})
    return settings.model_copy(update={"embedding": embedding})


@pytest.fixture()
def remote_api(settings: Settings, auth_headers: dict[str, str]) -> Iterator[httpx.Client]:
    """An API that embeds questions and names through the scripted server."""
    from api.app import create_app

    with (
        ThreadedServer(create_app(_remote_embeddings(settings))) as url,
        httpx.Client(base_url=url, timeout=60.0, headers=auth_headers) as client,
    ):
        yield client


def test_graph_search_with_zero_vectors_answers(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
    remote_api: httpx.Client,
) -> None:
    script_extractions(fresh_scripted_llm)
    kb = graph_kb(http)
    doc = wait_terminal(http, upload(http, kb["id"], "z.md", document_text().encode()).json()["id"])
    assert doc["parse_status"] == "completed" and doc["entity_count"] > 0, doc
    _zeros_for_marker(fresh_scripted_llm)
    # The question and its one unknown name ("Zzyzx") embed to zeros: the question's vector
    # search and the name's near match are skipped; the graph and keyword searches still run.
    body: dict[str, Any] = {"query": f"what did {MARKER} build", "use_graph": True}
    found = remote_api.post(f"/api/v1/knowledge-bases/{kb['id']}/search", json=body)
    assert found.status_code == 200, found.text
    result = found.json()
    assert result["unsearchable_vectors"] == 2, result
    assert result["vector_used"] is False and result["graph_used"] is True
    assert fresh_scripted_llm.requests("/v1/embeddings"), "the names went to the server"
    remove_label(neo4j_driver, kb["id"])


def _paragraph(word: str) -> str:
    return " ".join([word] * 40)  # 200 to 440 characters: with the next, over one chunk


# One paragraph per chunk, no overlap: only the marked chunk's text holds the marker.
_CHUNKING = {"chunk_size": 512, "chunk_overlap": 0, "separators": ["\n\n"]}


def test_zero_chunk_vectors_are_stored_without_a_vector(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    _zeros_for_marker(fresh_scripted_llm)
    remote = _remote_embeddings(settings)
    text = "\n\n".join([_paragraph("harbour"), _paragraph(MARKER), _paragraph("lighthouse")])
    with own_database(services_env["DATABASE_URL"], remote, settings_env) as (own, _, sessions):
        ctx = core_context(own, sessions, DisabledGraphStore())
        embedder = ctx.embedder
        assert isinstance(embedder, OpenAiCompatibleEmbedder)
        with embedder:
            kb = KnowledgeBaseCreate(name="zeros", chunking=_CHUNKING)
            _, doc_id = add_and_enqueue(ctx, text.encode(), "zeros.txt", kb)
            process_document(ctx, doc_id, 1)
        with session_scope(sessions) as session:
            doc = session.get(Knowledge, doc_id)
            assert doc is not None
            status, embed = doc.parse_status, doc.progress["embed"]
            rows = session.execute(
                select(Chunk.content, Chunk.embedding).where(Chunk.knowledge_id == doc_id)
            ).all()
    assert status == "completed"
    vectors = {content.split()[0]: embedding is not None for content, embedding in rows}
    assert vectors == {"harbour": True, MARKER: False, "lighthouse": True}
    assert embed["skipped"] == 1 and "positive finite norm" in embed["detail"]


def test_zero_memory_vectors_are_kept_out_of_the_index(
    settings: Settings,
    session_factory: sessionmaker[Session],
    neo4j_driver: Driver,
    owner: MemoryOwner,
    clock: ManualClock,
) -> None:
    ctx = memory_context(settings, session_factory, neo4j_driver, clock=clock)
    zero = [0.0] * settings.embedding.dim
    fact = NewFact(text="a fact whose vector came back as zeros", kind=FactKind.QA, importance=0.5)
    fact_id = uuid.uuid4()
    assert ctx.archive.upsert(owner, fact_id, fact, zero, clock()) is True
    stored = ctx.archive.get(owner, fact_id)
    assert stored is not None and stored.text == fact.text
    assert ctx.archive.nearest(owner, zero, 5) == []
    # The fact without a vector does not break a similarity read of real vectors either.
    assert ctx.archive.nearest(owner, ctx.embedder.embed_query("zeros"), 5) == []


def test_zero_name_vectors_are_not_stored(settings: Settings, neo4j_driver: Driver) -> None:
    store = Neo4jGraphStore(neo4j_driver, settings.neo4j)
    dim = settings.embedding.dim
    kb_id = uuid.uuid4()
    store.ensure_kb_indexes(kb_id)
    store.ensure_vector_index(dim)
    store.write_chunk_graph(kb_id, uuid.uuid4(), uuid.uuid4(), graph(["Alpha Works", "Beta Works"]))
    try:
        unit = [1.0] + [0.0] * (dim - 1)
        store.set_key_vectors(kb_id, {"alpha works": [0.0] * dim, "beta works": unit})
        records, _, _ = neo4j_driver.execute_query(
            "MATCH (c:BaseEntity {kb: $kb}) RETURN c.key AS key, c.embedding IS NOT NULL AS has",
            kb=str(kb_id),
        )
        assert {r["key"]: r["has"] for r in records} == {"alpha works": False, "beta works": True}
    finally:
        drop_kb_graph(store, neo4j_driver, kb_id)
