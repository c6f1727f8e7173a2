"""Removals made while the graph is switched off are owed to Neo4j and paid by the reconciler
once it is on again: no node outlives its document or base."""

from __future__ import annotations

import uuid

import pytest
from celery import Celery
from neo4j import Driver
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.models import GraphPurge
from graphrag.graph.labels import entity_label
from graphrag.graph.models import GraphData, GraphNode
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.graph.store import DisabledGraphStore
from graphrag.ingest.context import IngestContext
from graphrag.ingest.documents import request_delete, request_reparse
from graphrag.ingest.reconcile import reconcile
from graphrag.kb.service import request_kb_delete
from graphrag.settings import Settings
from tests.support.isolated_worker import (
    add_and_enqueue,
    core_context,
    read_document,
)
from tests.support.task_leases import process_document, purge_document, purge_knowledge_base

pytestmark = pytest.mark.integration


def _contexts(
    settings: Settings, sessions: sessionmaker[Session], celery: Celery, driver: Driver
) -> tuple[IngestContext, IngestContext]:
    """The same services with the graph switched off, then on again."""
    off = core_context(settings, sessions, DisabledGraphStore())
    on = core_context(settings, sessions, Neo4jGraphStore(driver, settings.neo4j))
    return off, on


def _written(on: IngestContext, kb_id: uuid.UUID, doc_id: uuid.UUID) -> None:
    """Nodes the document wrote while the graph was on."""
    graph = GraphData(nodes=[GraphNode(name="Owed Entity"), GraphNode(name="Second Entity")])
    on.graph.write_chunk_graph(kb_id, doc_id, uuid.uuid4(), graph)


def _nodes(driver: Driver, label_id: uuid.UUID) -> int:
    records, _, _ = driver.execute_query(f"MATCH (n:{entity_label(label_id)}) RETURN count(n)")
    return int(records[0][0])


def _owed(sessions: sessionmaker[Session]) -> list[uuid.UUID]:
    with session_scope(sessions) as session:
        return list(session.execute(select(GraphPurge.kb_id)).scalars())


def test_document_deleted_while_graph_off_is_removed_once_on(
    settings: Settings,
    session_factory: sessionmaker[Session],
    idle_celery: Celery,
    neo4j_driver: Driver,
) -> None:
    off, on = _contexts(settings, session_factory, idle_celery, neo4j_driver)
    kb_id, doc_id = add_and_enqueue(off, f"Owed {uuid.uuid4()}".encode(), "owed.txt")
    _written(on, kb_id, doc_id)
    doc = read_document(off, doc_id)
    with session_scope(session_factory) as session:
        request_delete(session, doc.tenant_id, doc_id)
    assert purge_document(off, doc_id)
    assert _nodes(neo4j_driver, doc_id) == 2 and kb_id in _owed(session_factory)
    assert reconcile(off, stuck_after_s=3600).graph_purges == []  # still off: still owed
    report = reconcile(on, stuck_after_s=3600)
    assert report.graph_purges and kb_id not in _owed(session_factory)
    assert _nodes(neo4j_driver, doc_id) == 0


def test_base_deleted_while_graph_off_is_removed_once_on(
    settings: Settings,
    session_factory: sessionmaker[Session],
    idle_celery: Celery,
    neo4j_driver: Driver,
) -> None:
    off, on = _contexts(settings, session_factory, idle_celery, neo4j_driver)
    kb_id, doc_id = add_and_enqueue(off, f"Owed base {uuid.uuid4()}".encode(), "base.txt")
    _written(on, kb_id, doc_id)
    doc = read_document(off, doc_id)
    with session_scope(session_factory) as session:
        request_kb_delete(session, doc.tenant_id, kb_id)
    assert purge_knowledge_base(off, kb_id)
    assert _nodes(neo4j_driver, kb_id) == 2
    reconcile(on, stuck_after_s=3600)
    assert _nodes(neo4j_driver, kb_id) == 0 and kb_id not in _owed(session_factory)


def test_reparse_while_graph_off_removes_the_old_graph_once_on(
    settings: Settings,
    session_factory: sessionmaker[Session],
    idle_celery: Celery,
    neo4j_driver: Driver,
) -> None:
    off, on = _contexts(settings, session_factory, idle_celery, neo4j_driver)
    kb_id, doc_id = add_and_enqueue(off, f"Re-parsed {uuid.uuid4()}".encode(), "again.txt")
    process_document(off, doc_id, 1)
    _written(on, kb_id, doc_id)
    doc = read_document(off, doc_id)
    with session_scope(session_factory) as session:
        _, attempt = request_reparse(session, doc.tenant_id, doc_id)
    process_document(off, doc_id, attempt)
    assert _nodes(neo4j_driver, doc_id) == 2 and kb_id in _owed(session_factory)
    reconcile(on, stuck_after_s=3600)
    assert _nodes(neo4j_driver, doc_id) == 0 and kb_id not in _owed(session_factory)
    # The document itself is kept, with its new attempt.
    assert read_document(off, doc_id).attempt == attempt
    with session_scope(session_factory) as session:
        request_kb_delete(session, doc.tenant_id, kb_id)
    purge_knowledge_base(on, kb_id)
