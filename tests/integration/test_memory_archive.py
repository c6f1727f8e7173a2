"""The archival store on real Neo4j: vector index, recency over days, read-only probes,
owner isolation, one summary per session, SAME_AS links to knowledge-base entities."""

from __future__ import annotations

import dataclasses
import math
import uuid

import pytest
from neo4j import Driver
from sqlalchemy import delete
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.models import KnowledgeBase, Tenant
from graphrag.graph.models import GraphData, GraphNode
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.graph.store import DisabledGraphStore
from graphrag.kb.schemas import KnowledgeBaseCreate
from graphrag.kb.service import create_kb
from graphrag.llm.messages import ChatMessage
from graphrag.memory.compaction import compact_session, summary_fact_id
from graphrag.memory.context import MemoryContext
from graphrag.memory.dedup import filter_duplicates
from graphrag.memory.facts_service import add_fact, search
from graphrag.memory.recall import session_start_recall
from graphrag.memory.recall_log import record_exchange
from graphrag.memory.records import FactKind, MemoryOwner, NewFact
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant
from tests.support.graph_helpers import remove_label
from tests.support.memory_helpers import (
    DAY_MS,
    ManualClock,
    fact_rows,
    memory_context,
    new_chat_session,
    owned_memory,
)
from tests.support.task_leases import close_session

pytestmark = pytest.mark.integration


@pytest.fixture
def ctx(
    settings: Settings,
    session_factory: sessionmaker[Session],
    neo4j_driver: Driver,
    clock: ManualClock,
) -> MemoryContext:
    return memory_context(settings, session_factory, neo4j_driver, clock=clock)


def test_vector_index_is_384_dimensional_cosine(ctx: MemoryContext, neo4j_driver: Driver) -> None:
    records, _, _ = neo4j_driver.execute_query(
        "SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options "
        "WHERE name = 'memory_embedding' RETURN *"
    )
    assert len(records) == 1
    index = records[0]
    config = index["options"]["indexConfig"]
    assert (index["type"], index["labelsOrTypes"], index["properties"]) == (
        "VECTOR",
        ["Memory"],
        ["embedding"],
    )
    assert config["vector.dimensions"] == 384
    assert config["vector.similarity_function"].lower() == "cosine"


def test_recency_decays_over_days_and_search_reads_only(
    ctx: MemoryContext, owner: MemoryOwner, clock: ManualClock, neo4j_driver: Driver
) -> None:
    fact = add_fact(ctx, owner, "The user prefers dark roast coffee.", FactKind.NOTE, None)
    recencies = []
    for days in (1, 9, 30):
        clock.now_ms = fact.created_at + days * DAY_MS
        hits = search(ctx, owner, "what coffee does the user like", 5)
        assert [h.fact.id for h in hits] == [fact.id]
        recencies.append(hits[0].recency)
        expected = math.exp(-days * 86_400 / ctx.settings.recency_decay_s)
        assert hits[0].recency == pytest.approx(expected, rel=1e-6)
    assert recencies[0] > recencies[1] > recencies[2]
    row = fact_rows(neo4j_driver, owner)[str(fact.id)]
    assert (row["access_count"], row["last_access"]) == (0, fact.created_at)


def test_dedup_probe_leaves_access_counts_unchanged(
    ctx: MemoryContext, owner: MemoryOwner, clock: ManualClock, neo4j_driver: Driver
) -> None:
    stored = add_fact(ctx, owner, "Deployments happen on Tuesdays.", FactKind.NOTE, None)
    session_start_recall(ctx, owner, "When do deployments happen?")
    before = fact_rows(neo4j_driver, owner)
    assert before[str(stored.id)]["access_count"] == 1
    clock.advance(days=3)
    candidates = [
        NewFact(text="Deployments happen on Tuesdays", kind=FactKind.NOTE, importance=0.5),
        NewFact(text="The office plant needs water weekly.", kind=FactKind.NOTE, importance=0.5),
    ]
    vectors = ctx.embedder.embed([c.text for c in candidates])
    kept, duplicates = filter_duplicates(
        ctx.archive, owner, candidates, vectors, ctx.settings.dedup_similarity
    )
    assert duplicates == 1 and [k[1].text for k in kept] == [candidates[1].text]
    assert fact_rows(neo4j_driver, owner) == before


def test_recall_touches_what_it_returns(
    ctx: MemoryContext, owner: MemoryOwner, clock: ManualClock, neo4j_driver: Driver
) -> None:
    coffee = add_fact(ctx, owner, "The user prefers dark roast coffee.", FactKind.NOTE, None)
    unrelated = add_fact(ctx, owner, "Quarterly taxes are filed by Ines.", FactKind.NOTE, None)
    clock.advance(days=1)
    recall = session_start_recall(ctx, owner, "Which coffee should I order for the user?")
    recalled = {r.scored.fact.id for r in recall.facts}
    assert coffee.id in recalled and unrelated.id not in recalled
    rows = fact_rows(neo4j_driver, owner)
    assert (rows[str(coffee.id)]["access_count"], rows[str(coffee.id)]["last_access"]) == (
        1,
        clock(),
    )
    assert rows[str(unrelated.id)]["access_count"] == 0


def test_owners_never_see_each_other_even_when_the_pool_is_crowded(
    settings: Settings,
    session_factory: sessionmaker[Session],
    neo4j_driver: Driver,
    owner: MemoryOwner,
    clock: ManualClock,
) -> None:
    # A pool of one node: another owner's identical fact fills it, the exact scan answers.
    ctx = memory_context(settings, session_factory, neo4j_driver, clock=clock, vector_candidates=1)
    with owned_memory(settings, session_factory, neo4j_driver) as other:
        text = "The staging server is called bluebird."
        add_fact(ctx, other, text, FactKind.NOTE, None)
        mine = add_fact(ctx, owner, text, FactKind.NOTE, None)  # not a duplicate: other owner
        hits = ctx.archive.nearest(owner, ctx.embedder.embed_query(text), 3)
        assert [h.fact.id for h in hits] == [mine.id]
        assert hits[0].similarity == pytest.approx(1.0, abs=1e-3)


def _turns(count: int, body: int) -> list[ChatMessage]:
    messages = [ChatMessage(role="system", content="You help with the migration.")]
    for i in range(count):
        messages.append(ChatMessage(role="user", content=f"Step {i}: " + "u" * body))
        messages.append(ChatMessage(role="assistant", content=f"Done {i}. " + "a" * body))
    return messages


def test_compaction_stores_exactly_one_summary_per_session(
    ctx: MemoryContext, owner: MemoryOwner, clock: ManualClock, neo4j_driver: Driver
) -> None:
    session_id = uuid.uuid4()
    tight = ctx.settings.model_copy(update={"compact_threshold_chars": 3_000})
    small = dataclasses.replace(ctx, settings=tight)
    conversation = _turns(8, 300)
    created = []
    for _ in range(5):  # every later turn is over the budget as well
        conversation += _turns(1, 300)[1:]
        result = compact_session(small, owner, session_id, conversation)
        assert result.context.summary is not None
        assert result.context.messages[-6:] == conversation[-6:]
        created.append(result.summary_created)
        clock.advance(seconds=60)
    assert created == [True, False, False, False, False]
    summaries = [r for r in fact_rows(neo4j_driver, owner).values() if r["kind"] == "summary"]
    assert len(summaries) == 1
    assert summaries[0]["id"] == str(summary_fact_id(owner, session_id))
    assert summaries[0]["text"] == result.context.summary
    unchanged = compact_session(small, owner, session_id, conversation)
    assert not unchanged.summary_created and len(fact_rows(neo4j_driver, owner)) == 1


def test_memory_entities_link_to_same_named_kb_entities_of_the_tenant_only(
    settings: Settings,
    session_factory: sessionmaker[Session],
    neo4j_driver: Driver,
    ctx: MemoryContext,
    owner: MemoryOwner,
) -> None:
    store = Neo4jGraphStore(neo4j_driver, settings.neo4j)
    kb_ids: list[uuid.UUID] = []
    with session_scope(session_factory) as db:
        stranger = ensure_tenant(db, f"memtest-other-{uuid.uuid4().hex[:8]}")
        for tenant in (owner.tenant_id, stranger):
            data = KnowledgeBaseCreate(name=f"memtest-{uuid.uuid4().hex[:8]}")
            kb_ids.append(create_kb(db, settings, DisabledGraphStore(), tenant, data).id)
    try:
        for kb_id in kb_ids:
            graph = GraphData(nodes=[GraphNode(name="Nimbus Gateway")])
            store.write_chunk_graph(kb_id, uuid.uuid4(), uuid.uuid4(), graph)
        session_id = new_chat_session(session_factory, owner)
        with session_scope(session_factory) as db:
            record_exchange(
                db,
                owner,
                session_id,
                "Who maintains the nimbus gateway?",
                "The Nimbus Gateway is maintained by the platform team.",
                ["Nimbus Gateway"],
                clock=ctx.clock,
            )
        report = close_session(ctx, owner, session_id)
        assert report.same_as == 1
        records, _, _ = neo4j_driver.execute_query(
            "MATCH (:MemoryEntity {tenant: $tenant, owner: $owner})-[:SAME_AS]->(n:GraphEntity) "
            "RETURN labels(n) AS labels",
            {"tenant": str(owner.tenant_id), "owner": owner.owner},
        )
        linked = [label for r in records for label in r["labels"]]
        own_label = "ENTITY" + str(kb_ids[0]).replace("-", "_")
        other_label = "ENTITY" + str(kb_ids[1]).replace("-", "_")
        assert own_label in linked and other_label not in linked
        hood = ctx.entities.neighbourhood(owner, "nimbus gateway")
        assert hood is not None and hood.name == "Nimbus Gateway"
        assert [s.name for s in hood.same_as] == ["Nimbus Gateway"] and hood.facts
    finally:
        for kb_id in kb_ids:
            remove_label(neo4j_driver, str(kb_id))
        with session_scope(session_factory) as db:
            db.execute(delete(KnowledgeBase).where(KnowledgeBase.id.in_(kb_ids)))
            db.execute(delete(Tenant).where(Tenant.id == stranger))
