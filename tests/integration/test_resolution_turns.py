"""Resolution runs take turns per base on real PostgreSQL and Neo4j: a task that finds its base's
turn taken leaves its document to the run holding it and ends at once; that run resolves every
waiting document of the base and settles their outbox rows."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
from neo4j import Driver
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import OutboxStatus
from graphrag.db.models import OutboxTask
from graphrag.db.outbox import TaskLease, TaskName, enqueue, resolve_entities
from graphrag.graph.resolution.resolver import resolve_document, resolve_documents
from graphrag.graph.resolution.store import Neo4jResolutionStore
from graphrag.ingest.graph.chunk_extraction import GraphContext
from graphrag.ingest.graph.entity_resolution import base_turn, resolve_document_entities
from graphrag.llm.client import LlmClient
from graphrag.settings import Settings
from tests.support.graph_data import GraphKb, graph, graph_kb, one_entity_in_two_documents

pytestmark = pytest.mark.integration

RUNS = ("Elin Brask", "runs", "Zorvath Industries")


@pytest.fixture
def kb(
    http: httpx.Client,
    neo4j_driver: Driver,
    settings: Settings,
    session_factory: sessionmaker[Session],
) -> Iterator[GraphKb]:
    with graph_kb(http, neo4j_driver, settings, session_factory) as made:
        yield made


def _context(settings: Settings, kb: GraphKb, driver: Driver, batch: int = 16) -> GraphContext:
    rules_only = settings.resolution.model_copy(
        update={"llm_enabled": False, "batch_documents": batch}
    )
    own = settings.model_copy(update={"resolution": rules_only})
    store = Neo4jResolutionStore(driver, own.neo4j)
    store.ensure_schema()
    return GraphContext(own, kb.sessions, LlmClient(own.llm), kb.store, resolution=store)


def _lease(doc: uuid.UUID) -> TaskLease:
    return TaskLease(TaskName.RESOLVE_ENTITIES, (str(doc),))


def _owed(sessions: sessionmaker[Session], *docs: uuid.UUID) -> list[uuid.UUID]:
    with sessions() as session:
        rows = session.scalars(
            select(OutboxTask.knowledge_id).where(
                OutboxTask.task_name == TaskName.RESOLVE_ENTITIES.value,
                OutboxTask.knowledge_id.in_(docs),
            )
        )
        return sorted(doc for doc in rows if doc is not None)


def _resolved_ids(driver: Driver, kb_id: uuid.UUID, key: str) -> list[str | None]:
    records, _, _ = driver.execute_query(
        "MATCH (:BaseEntity {kb: $kb, key: $key})<-[:INSTANCE_OF]-(n:GraphEntity) "
        "OPTIONAL MATCH (n)-[:RESOLVED_AS]->(r:ResolvedEntity) RETURN r.id AS id",
        kb=str(kb_id),
        key=key,
    )
    return [record["id"] for record in records]


@pytest.mark.parametrize("batch", [1, 2], ids=["one-by-one", "together"])
def test_a_busy_base_leaves_the_document_to_the_run_holding_it(
    kb: GraphKb, neo4j_driver: Driver, settings: Settings, batch: int
) -> None:
    """Resolved one by one or read, planned and written together, the two documents' Elin
    Brask ends as one resolved entity (together, the second joins what the first made)."""
    plant, people = one_entity_in_two_documents(kb)
    ctx = _context(settings, kb, neo4j_driver, batch)
    # Both tasks were sent and started (their rows live), as the outbox leaves them.
    with session_scope(kb.sessions) as session:
        enqueue(session, resolve_entities(plant), resolve_entities(people))
        assert _lease(plant).renew(session) and _lease(people).renew(session)

    with kb.sessions() as holder:
        assert holder.scalar(base_turn(kb.id)) is True
        assert resolve_document_entities(ctx, plant, _lease(plant)) is None
        holder.rollback()
    assert _owed(kb.sessions, plant, people) == sorted([plant, people])
    assert _resolved_ids(neo4j_driver, kb.id, "elin brask") == [None, None]

    report = resolve_document_entities(ctx, people, _lease(people))
    assert report is not None
    assert report.entities == 6  # three entities in each document
    assert report.merged >= 2  # the second document's Elin Brask and Zorvath Industries
    assert _owed(kb.sessions, plant, people) == []
    ids = _resolved_ids(neo4j_driver, kb.id, "elin brask")
    assert len(ids) == 2 and ids[0] is not None and ids[0] == ids[1]

    # The first task's message, delivered again: its row is gone, nothing is left to do.
    assert resolve_document_entities(ctx, plant, _lease(plant)) is None


def test_no_document_is_planned_past_the_runs_deadline(
    kb: GraphKb, neo4j_driver: Driver, settings: Settings
) -> None:
    plant, people = one_entity_in_two_documents(kb)
    ctx = _context(settings, kb, neo4j_driver)
    assert ctx.resolution is not None
    rules = ctx.settings.resolution
    report, done = resolve_documents(
        ctx.resolution, None, rules, kb.id, [plant, people], deadline=time.monotonic() - 1
    )
    assert (report.entities, done) == (0, [])
    assert _resolved_ids(neo4j_driver, kb.id, "elin brask") == [None, None]
    report, done = resolve_documents(ctx.resolution, None, rules, kb.id, [plant, people])
    assert (report.entities, done) == (6, [plant, people])


def test_a_document_gone_or_reprocessed_is_settled_with_nothing_done(
    kb: GraphKb, neo4j_driver: Driver, settings: Settings
) -> None:
    ctx = _context(settings, kb, neo4j_driver)
    gone = uuid.uuid4()
    with session_scope(kb.sessions) as session:
        enqueue(session, resolve_entities(gone))
        assert _lease(gone).renew(session)
    assert resolve_document_entities(ctx, gone, _lease(gone)) is None
    assert _owed(kb.sessions, gone) == []


def test_a_gone_documents_task_hands_back_the_rows_its_message_stood_for(
    kb: GraphKb, neo4j_driver: Driver, settings: Settings
) -> None:
    plant, people = one_entity_in_two_documents(kb)
    ctx = _context(settings, kb, neo4j_driver)
    gone = uuid.uuid4()
    docs = (gone, plant, people)
    with session_scope(kb.sessions) as session:
        enqueue(session, *(resolve_entities(doc) for doc in docs))
        # One relay pass marked the three sent (one transaction: one sent_at) and sent one
        # message, the gone document's, deleted since.
        marked = session.execute(
            update(OutboxTask)
            .where(OutboxTask.knowledge_id.in_(docs))
            .values(status=OutboxStatus.SENT, sent_at=func.now())
            .returning(OutboxTask.sent_at)
        ).scalars()
        (sent_at,) = set(marked)
        assert sent_at is not None
        assert _lease(gone).renew(session)
    assert resolve_document_entities(ctx, gone, _lease(gone)) is None
    with kb.sessions() as session:
        rows = session.execute(
            select(OutboxTask.knowledge_id, OutboxTask.status, OutboxTask.sent_at).where(
                OutboxTask.knowledge_id.in_(docs)
            )
        ).all()
    assert len(rows) == 2
    assert {doc for doc, _, _ in rows} == {plant, people}
    # Handed back: pending again, unless the API's relay (same database) has already sent them
    # anew, with a later send time; never left under the gone message's send.
    for doc, status, sent in rows:
        sent_anew = sent is not None and sent > sent_at
        assert status is OutboxStatus.PENDING or sent_anew, (doc, status, sent, sent_at)


def test_a_known_name_is_found_behind_documents_not_resolved_yet(
    kb: GraphKb, neo4j_driver: Driver, settings: Settings
) -> None:
    """Documents completed at once leave many unresolved nodes of a key: the bounded read of the
    key's nodes counts resolved ones, so the known entity is still found (not made again)."""
    plant, people = one_entity_in_two_documents(kb)
    ctx = _context(settings, kb, neo4j_driver)
    assert ctx.resolution is not None
    one = ctx.settings.resolution.model_copy(update={"max_instances_read": 1})
    assert resolve_document(ctx.resolution, None, one, kb.id, plant).merged == 0
    for _ in range(3):  # newer than plant.md's node: read first
        doc, (chunk,) = kb.document("Elin Brask runs Zorvath Industries.")
        kb.store.write_chunk_graph(
            kb.id, doc, chunk, graph(["Elin Brask", "Zorvath Industries"], [RUNS])
        )
    report = resolve_document(ctx.resolution, None, one, kb.id, people)
    assert report.merged >= 2  # Elin Brask and Zorvath Industries join plant.md's entities
    ids = _resolved_ids(neo4j_driver, kb.id, "elin brask")
    assert len(ids) == 5 and ids.count(None) == 3  # the three new documents wait their turn
    assert len({rid for rid in ids if rid is not None}) == 1


def test_a_shared_neighbour_is_found_behind_documents_not_resolved_yet(
    kb: GraphKb, neo4j_driver: Driver, settings: Settings
) -> None:
    """The shared-neighbour branch bounds the resolved nodes it reads, not every instance of the
    neighbour's key: documents completed at once, read first, do not hide a resolved relative."""
    plant, _ = one_entity_in_two_documents(kb)
    ctx = _context(settings, kb, neo4j_driver)
    assert ctx.resolution is not None
    # Neighbours only (and the same key, which "E. Brask" has no other node of), one read each.
    one = ctx.settings.resolution.model_copy(
        update={"max_instances_read": 1, "word_candidates": 0, "vector_candidates": 0}
    )
    resolve_document(ctx.resolution, None, one, kb.id, plant)
    # plant.md's Zorvath Industries is related to Elin Brask and Tromso, both resolved now.
    relatives = {
        rid
        for key in ("elin brask", "tromso")
        for rid in _resolved_ids(neo4j_driver, kb.id, key)
        if rid is not None  # people.txt's Elin Brask waits its turn
    }
    assert len(relatives) == 2
    for _ in range(3):  # newer than plant.md's Zorvath Industries: read first
        doc, (chunk,) = kb.document("Elin Brask runs Zorvath Industries.")
        kb.store.write_chunk_graph(
            kb.id, doc, chunk, graph(["Elin Brask", "Zorvath Industries"], [RUNS])
        )
    query, (chunk,) = kb.document("E. Brask runs Zorvath Industries.")
    runs = ("E. Brask", "runs", "Zorvath Industries")
    kb.store.write_chunk_graph(
        kb.id, query, chunk, graph(["E. Brask", "Zorvath Industries"], [runs])
    )
    profiles = ctx.resolution.document_profiles(kb.id, [query], one)
    found = ctx.resolution.candidates(kb.id, profiles, one)
    # One resolved relative read (the bound is 1): one of plant.md's, not none.
    assert {c.resolved_id for c in found[str(query)].get("E. Brask", [])} & relatives
