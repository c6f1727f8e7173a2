"""The memory search that walks, on real Neo4j and over real HTTP: an entity found by a word
of its description only, the walk's hop and node bounds, the facts naming what was reached,
and the route's access rules and bounds."""

from __future__ import annotations

import dataclasses
import itertools
import uuid
from collections import Counter

import httpx
import pytest
from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.models import Capability
from graphrag.memory.archive import MemoryArchive
from graphrag.memory.context import MemoryContext
from graphrag.memory.entity_graph import MemoryEntityGraph
from graphrag.memory.recall import RecallPhase, session_start_recall
from graphrag.memory.records import FactKind, MemoryOwner, NewFact, SessionEntity, SessionRelation
from graphrag.memory.subgraph import search_subgraph
from graphrag.settings import Settings
from tests.support.auth_helpers import bearer, make_key
from tests.support.memory_helpers import ManualClock, memory_context

pytestmark = pytest.mark.integration

SEARCH = "/api/v1/memory/search"
# A chain Atlas -> Borealis -> Cygnus -> Draco; only Atlas's description says "zeppelin".
CHAIN = ["Atlas", "Borealis", "Cygnus", "Draco"]
FACT = "Borealis was moved to the new rack on Monday."


@pytest.fixture
def ctx(
    settings: Settings,
    session_factory: sessionmaker[Session],
    neo4j_driver: Driver,
    clock: ManualClock,
) -> MemoryContext:
    return memory_context(settings, session_factory, neo4j_driver, clock=clock)


@pytest.fixture
def chain(ctx: MemoryContext, owner: MemoryOwner) -> MemoryOwner:
    session_id = uuid.uuid4()
    entities = [SessionEntity(name=n, description=f"{n} is a service.") for n in CHAIN[1:]]
    entities.append(SessionEntity(name="Atlas", description="Atlas renders the zeppelin maps."))
    relations = [
        SessionRelation(source=a, target=b, type="FEEDS") for a, b in itertools.pairwise(CHAIN)
    ]
    fact_id = uuid.uuid4()
    fact = NewFact(text=FACT, kind=FactKind.NOTE, importance=0.5, session_id=session_id)
    vector = ctx.embedder.embed([FACT])[0]
    now = ctx.clock()
    ctx.graph_io().write_all(
        [
            MemoryArchive.create_statement(owner, [(fact_id, fact, vector)], now),
            MemoryEntityGraph.merge_entities(owner, session_id, entities, now),
            MemoryEntityGraph.merge_relations(owner, session_id, relations, now),
            MemoryEntityGraph.link_mentions(owner, [(fact_id, ["Borealis"])]),
        ]
    )
    return owner


def _names(found: list[dict[str, object]] | list[str]) -> set[str]:
    return {str(e["name"]) if isinstance(e, dict) else e for e in found}


def test_a_description_word_finds_the_entity_and_the_walk_reaches_two_hops(
    ctx: MemoryContext, chain: MemoryOwner
) -> None:
    two = search_subgraph(ctx, chain, "zeppelin", hops=2)
    assert {e.name for e in two.entities} == {"Atlas", "Borealis", "Cygnus"}
    assert [e.name for e in two.entities if e.matched] == ["Atlas"]
    assert {(r.source, r.target) for r in two.relations} == {
        ("Atlas", "Borealis"),
        ("Borealis", "Cygnus"),
    }
    assert [f.text for f in two.facts] == [FACT]

    one = search_subgraph(ctx, chain, "zeppelin", hops=1)
    assert {e.name for e in one.entities} == {"Atlas", "Borealis"}
    assert {(r.source, r.target) for r in one.relations} == {("Atlas", "Borealis")}


def test_the_walk_respects_the_node_and_hop_bounds(ctx: MemoryContext, chain: MemoryOwner) -> None:
    capped = ctx.settings.model_copy(update={"subgraph_max_nodes": 2, "subgraph_max_hops": 3})
    small = dataclasses.replace(ctx, settings=capped)
    assert len(search_subgraph(small, chain, "zeppelin", hops=3).entities) == 2
    shallow = ctx.settings.model_copy(update={"subgraph_max_hops": 1})
    walked = search_subgraph(dataclasses.replace(ctx, settings=shallow), chain, "zeppelin")
    assert walked.hops == 1 and {e.name for e in walked.entities} == {"Atlas", "Borealis"}


def test_the_route_searches_the_callers_owner_only_and_bounds_its_parameters(
    http: httpx.Client,
    chain: MemoryOwner,
    settings: Settings,
    session_factory: sessionmaker[Session],
) -> None:
    who = {"owner": chain.owner}
    found = http.get(SEARCH, params={**who, "q": "Zeppelin"})
    assert found.status_code == 200, found.text
    assert _names(found.json()["entities"]) == {"Atlas", "Borealis", "Cygnus"}
    assert (
        http.get(SEARCH, params={**who, "q": "zeppelin", "owner": "nobody"}).json()["entities"]
        == []
    )

    max_hops = settings.memory.subgraph_max_hops
    too_deep = http.get(SEARCH, params={**who, "q": "zeppelin", "hops": max_hops + 1})
    assert too_deep.status_code == 422 and too_deep.json()["error"]["code"] == "invalid_input"
    too_long = http.get(SEARCH, params={**who, "q": "x" * (settings.memory.max_query_chars + 1)})
    assert too_long.status_code == 422
    assert http.get(SEARCH, params={**who, "q": " "}).status_code == 422
    assert http.get(SEARCH, params={**who, "q": "zeppelin", "hops": 0}).status_code == 422

    # A key bound to another owner may not read this one's memory; a write-only key may not read.
    tenant = f"tenant-{uuid.uuid4().hex[:10]}"
    admin = bearer(make_key(session_factory, settings, tenant, [Capability.ADMIN]).key)
    made = http.post(
        "/api/v1/admin/api-keys",
        json={"name": "bob's", "capabilities": ["read"], "owner": "bob"},
        headers=admin,
    )
    assert made.status_code == 201, made.text
    bob = bearer(made.json()["key"])
    refused = http.get(SEARCH, params={**who, "q": "zeppelin"}, headers=bob)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "owner_forbidden"
    writer = bearer(make_key(session_factory, settings, tenant, [Capability.WRITE]).key)
    blind = http.get(SEARCH, params={"q": "zeppelin"}, headers=writer)
    assert blind.status_code == 403 and blind.json()["error"]["code"] == "forbidden"


def test_session_start_recall_takes_the_configured_k_per_phase(
    ctx: MemoryContext, owner: MemoryOwner
) -> None:
    limits = ctx.settings
    assert (limits.identity_k, limits.context_k, limits.graph_k) == (5, 7, 3)
    identity = [
        f"The user is called Alice Martin, her rule {i} is short answers." for i in range(8)
    ]
    orion = [f"The Orion Cluster deployment step {i} finished on node {i}." for i in range(20)]
    texts = identity + orion
    vectors = ctx.embedder.embed(texts)
    rows = [
        (uuid.uuid4(), NewFact(text=t, kind=FactKind.NOTE, importance=0.5), v)
        for t, v in zip(texts, vectors, strict=True)
    ]
    now = ctx.clock()
    session_id = uuid.uuid4()
    ctx.graph_io().write_all(
        [
            MemoryArchive.create_statement(owner, rows, now),
            MemoryEntityGraph.merge_entities(
                owner, session_id, [SessionEntity(name="Orion Cluster")], now
            ),
            MemoryEntityGraph.link_mentions(
                owner, [(fact_id, ["Orion Cluster"]) for fact_id, fact, _ in rows[8:]]
            ),
        ]
    )
    recall = session_start_recall(ctx, owner, "How is the Orion Cluster deployment going?")
    counts = Counter(r.phase for r in recall.facts)
    assert counts == {RecallPhase.IDENTITY: 5, RecallPhase.CONTEXT: 7, RecallPhase.GRAPH: 3}
    assert len({r.scored.fact.id for r in recall.facts}) == 15


def test_recall_reaches_facts_through_the_memory_search(
    ctx: MemoryContext, chain: MemoryOwner
) -> None:
    # No entity is named in the message: only Atlas's description word leads to Borealis.
    recall = session_start_recall(ctx, chain, "Which tool handles zeppelin imagery?")
    assert recall.entities == []
    assert [(r.phase, r.scored.fact.text) for r in recall.facts] == [(RecallPhase.GRAPH, FACT)]
