"""The whole graph flow against a real llama.cpp server with a real small model: whatever the
model finds, the graph that lands in Neo4j is well-formed and accounted for."""

from __future__ import annotations

import uuid

import pytest
from neo4j import Driver
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import GraphStatus, ParseStatus
from graphrag.db.models import Chunk
from graphrag.extraction.models import ExtractConfig
from graphrag.graph.factory import build_graph_store
from graphrag.graph.labels import ENTITY_KEY_LABEL, entity_label
from graphrag.kb.schemas import IndexingStrategy, KnowledgeBaseCreate
from graphrag.settings import Settings
from tests.support.graph_helpers import remove_label
from tests.support.isolated_worker import (
    add_and_enqueue,
    core_context,
    finished,
    on_redis_db,
    own_database,
    wait_document,
)
from tests.support.llama import LLAMA_MODEL_NAME
from tests.support.services import data_dir
from tests.support.worker import WorkerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.llama]

LLAMA_REDIS_DB = 2  # outside the range the session fixtures pick from
# The test bounds each answer; production keeps the settings' 8192 so JSON is never cut short.
TEST_MAX_TOKENS = "384"
WAIT_S = 900.0
TEXT = (
    "Marie Curie was a physicist born in Warsaw. She worked at the University of Paris.\n\n"
    "Pierre Curie was a French physicist. He married Marie Curie in 1895."
)


def test_real_model_builds_a_well_formed_graph(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    llama_base_url: str,
    neo4j_driver: Driver,
) -> None:
    moved, env = on_redis_db(settings, settings_env, LLAMA_REDIS_DB)
    with own_database(services_env["DATABASE_URL"], moved, env) as (own_settings, env, sessions):
        _build_with_real_model(own_settings, env, sessions, llama_base_url, neo4j_driver)


def _build_with_real_model(
    own_settings: Settings,
    env: dict[str, str],
    sessions: sessionmaker[Session],
    llama_base_url: str,
    neo4j_driver: Driver,
) -> None:
    from workers.celery_app import create_celery

    env = {
        **env,
        "LLM_BASE_URL": llama_base_url,
        "LLM_MODEL": LLAMA_MODEL_NAME,
        "LLM_MAX_TOKENS": TEST_MAX_TOKENS,
        "LLM_TIMEOUT_S": "600",
    }
    celery = create_celery(own_settings)
    celery.control.purge()
    store = build_graph_store(own_settings, neo4j_driver)
    ctx = core_context(own_settings, sessions, store)
    worker = WorkerProcess(env, data_dir() / "test-logs" / "worker-llama.log", concurrency=1)
    worker.start(celery)
    create = KnowledgeBaseCreate(
        name=f"llama-{uuid.uuid4().hex[:8]}",
        chunking={"chunk_size": 120, "chunk_overlap": 0, "separators": ["\n\n"]},
        indexing=IndexingStrategy(graph_enabled=True),
        extract_config=ExtractConfig(enabled=True, tags=["born in", "worked at", "married"]),
    )
    try:
        kb_id, doc_id = add_and_enqueue(ctx, f"{TEXT}\n".encode(), "curie.md", create)
        doc = wait_document(ctx, doc_id, finished, timeout_s=WAIT_S)
    finally:
        worker.stop()
    assert doc.parse_status == ParseStatus.COMPLETED, doc.error
    with session_scope(ctx.sessions) as session:
        chunks = {
            str(c.id): c.graph_status
            for c in session.execute(select(Chunk).where(Chunk.knowledge_id == doc_id)).scalars()
        }
    # Each selected chunk was really asked and settled (done, or failed with its reason).
    assert set(chunks.values()) <= {GraphStatus.DONE, GraphStatus.FAILED}
    assert doc.failed_chunk_count == sum(s == GraphStatus.FAILED for s in chunks.values())

    records, _, _ = neo4j_driver.execute_query(
        f"MATCH (n:{entity_label(doc_id)}) RETURN n.name AS name, n.kg AS kg, n.chunks AS chunks,"
        " n.attributes AS attributes, labels(n) AS labels"
    )
    for node in records:
        assert node["name"].strip() == node["name"] and node["name"]
        assert node["kg"] == str(doc_id)
        assert set(node["labels"]) == {ENTITY_KEY_LABEL, entity_label(kb_id), entity_label(doc_id)}
        assert node["chunks"] and set(node["chunks"]) <= set(chunks)
        assert all(isinstance(a, str) for a in node["attributes"])
    rels, _, _ = neo4j_driver.execute_query(
        # Entity relations only: the link of each node to its base-level key is not one.
        f"MATCH (a:{entity_label(doc_id)})-[r]->(b:GraphEntity) "
        "RETURN a.kg AS ak, b.kg AS bk, elementId(a) = elementId(b) AS loop, r.chunks AS chunks"
    )
    for rel in rels:
        assert rel["ak"] == rel["bk"] == str(doc_id) and not rel["loop"]
        assert set(rel["chunks"]) <= set(chunks)
    assert (doc.entity_count, doc.relation_count) == (len(records), len(rels))
    remove_label(neo4j_driver, str(kb_id))
