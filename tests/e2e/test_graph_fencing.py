"""Late graph writes are fenced: a base deleted while its extraction is held by the LLM leaves
no node behind once the extraction answers."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest
from celery import Celery
from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.models import KnowledgeBase
from graphrag.graph.labels import entity_label
from tests.e2e.test_graph_build import graph_kb
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import upload
from tests.support.graph_helpers import kb_graph_rule
from tests.support.worker import WorkerProcess, wait_idle

pytestmark = pytest.mark.e2e

HOLD_S = 3.0  # the LLM holds the extraction this long (under the client's 5 s timeout)
WAIT_S = 30.0


def _until(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _count(driver: Driver, query: str) -> int:
    records, _, _ = driver.execute_query(query)
    return int(records[0][0])


def test_base_deleted_during_extraction_leaves_no_node(
    http: httpx.Client,
    worker: WorkerProcess,
    celery_app: Celery,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
    session_factory: sessionmaker[Session],
) -> None:
    marker = f"LATE{uuid.uuid4().hex[:8]}"
    nodes = [{"name": "Late Entity", "attributes": []}, {"name": "Other Entity", "attributes": []}]
    relations = [{"node1": "Late Entity", "node2": "Other Entity", "type": "knows"}]
    fresh_scripted_llm.set_rules(
        [kb_graph_rule(marker, nodes, relations, fault={"delay_s": HOLD_S})],
        default={"content": "none"},
    )
    kb = graph_kb(http)
    kb_id = uuid.UUID(kb["id"])
    doc = upload(http, kb["id"], "late.md", f"{marker}. One paragraph only.".encode()).json()
    _until(lambda: fresh_scripted_llm.requests("/v1/chat/completions"), "the held extraction")
    held_at = time.monotonic()
    assert http.delete(f"/api/v1/knowledge-bases/{kb['id']}").status_code == 202

    def purged() -> bool:
        with session_scope(session_factory) as session:
            return session.get(KnowledgeBase, kb_id) is None

    # The purge finishes while the extraction is still held (the worker has a free process).
    _until(purged, "the purge of the base")
    assert time.monotonic() < held_at + HOLD_S, "the purge came after the write: no race shown"
    wait_idle(celery_app)
    label = entity_label(kb["id"])
    assert _count(neo4j_driver, f"MATCH (n:{label}) RETURN count(n)") == 0
    assert _count(neo4j_driver, f"MATCH (n:{entity_label(doc['id'])}) RETURN count(n)") == 0
