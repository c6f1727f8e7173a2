"""Forgetting a session on real Neo4j: what two sessions taught about one entity and one
relation is kept per session, deleting one leaves the other's part, deleting both removes all."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from graphrag.memory.context import MemoryContext
from graphrag.memory.entity_graph import MemoryEntityGraph
from graphrag.memory.records import MemoryOwner, SessionEntity, SessionRelation
from graphrag.settings import Settings
from tests.support.memory_helpers import ManualClock, memory_context

pytestmark = pytest.mark.integration


@pytest.fixture
def ctx(
    settings: Settings,
    session_factory: sessionmaker[Session],
    neo4j_driver: Driver,
    clock: ManualClock,
) -> MemoryContext:
    return memory_context(settings, session_factory, neo4j_driver, clock=clock)


def _learn(
    ctx: MemoryContext,
    owner: MemoryOwner,
    session_id: uuid.UUID,
    description: str,
    occurrences: int,
) -> None:
    """What a session close writes: the two entities, then the relation `occurrences` times."""
    entities = [
        SessionEntity(name="Orion Cluster", description=description),
        SessionEntity(name="Vega Team", description=""),
    ]
    relation = SessionRelation(source="Orion Cluster", target="Vega Team", type="RUN_BY")
    ctx.graph_io().write_all(
        [
            MemoryEntityGraph.merge_entities(owner, session_id, entities, ctx.clock()),
            MemoryEntityGraph.merge_relations(
                owner, session_id, [relation] * occurrences, ctx.clock()
            ),
        ]
    )


def _state(driver: Driver, owner: MemoryOwner) -> tuple[dict[str, str], list[dict[str, Any]]]:
    params = {"tenant": str(owner.tenant_id), "owner": owner.owner}
    entities, _, _ = driver.execute_query(
        "MATCH (e:MemoryEntity {tenant: $tenant, owner: $owner}) "
        "RETURN e.key AS key, e.description AS description",
        params,
    )
    relations, _, _ = driver.execute_query(
        "MATCH (:MemoryEntity {tenant: $tenant, owner: $owner})-[r:RELATES]->() "
        "RETURN r.type AS type, r.weight AS weight",
        params,
    )
    return {r["key"]: r["description"] for r in entities}, [dict(r) for r in relations]


def test_deleting_one_session_keeps_the_other_sessions_part(
    ctx: MemoryContext, owner: MemoryOwner, neo4j_driver: Driver
) -> None:
    first, second = uuid.uuid4(), uuid.uuid4()
    _learn(ctx, owner, first, "The Orion Cluster hosts the billing services in Lyon.", 2)
    _learn(ctx, owner, second, "Orion Cluster: GPU nodes.", 3)
    entities, relations = _state(neo4j_driver, owner)
    assert entities["orion cluster"] == "The Orion Cluster hosts the billing services in Lyon."
    assert relations == [{"type": "RUN_BY", "weight": 5}]

    ctx.archive.delete_session_facts(owner.tenant_id, first)
    entities, relations = _state(neo4j_driver, owner)
    assert entities == {"orion cluster": "Orion Cluster: GPU nodes.", "vega team": ""}
    assert relations == [{"type": "RUN_BY", "weight": 3}]

    ctx.archive.delete_session_facts(owner.tenant_id, second)
    assert _state(neo4j_driver, owner) == ({}, [])


def test_a_session_learnt_twice_is_one_part_and_its_weight_adds_up(
    ctx: MemoryContext, owner: MemoryOwner, neo4j_driver: Driver
) -> None:
    kept, twice = uuid.uuid4(), uuid.uuid4()
    _learn(ctx, owner, kept, "Orion Cluster.", 1)
    _learn(ctx, owner, twice, "Orion Cluster runs in Lyon.", 1)
    _learn(ctx, owner, twice, "Orion Cluster runs in Lyon on GPU nodes.", 2)
    entities, relations = _state(neo4j_driver, owner)
    assert entities["orion cluster"] == "Orion Cluster runs in Lyon on GPU nodes."
    assert relations == [{"type": "RUN_BY", "weight": 4}]

    ctx.archive.delete_session_facts(owner.tenant_id, twice)
    entities, relations = _state(neo4j_driver, owner)
    assert entities["orion cluster"] == "Orion Cluster."
    assert relations == [{"type": "RUN_BY", "weight": 1}]


def test_deleting_a_chat_session_over_http_takes_back_its_part(
    ctx: MemoryContext, owner: MemoryOwner, neo4j_driver: Driver, http: httpx.Client
) -> None:
    made = [http.post("/api/v1/sessions", json={"title": f"s{n}"}) for n in range(2)]
    assert all(r.status_code == 201 for r in made), [r.text for r in made]
    first, second = (uuid.UUID(r.json()["id"]) for r in made)
    _learn(ctx, owner, first, "Orion Cluster hosts the billing services in Lyon.", 4)
    _learn(ctx, owner, second, "Orion Cluster: GPU nodes.", 1)

    assert http.delete(f"/api/v1/sessions/{first}").status_code == 204
    entities, relations = _state(neo4j_driver, owner)
    assert entities["orion cluster"] == "Orion Cluster: GPU nodes."
    assert relations == [{"type": "RUN_BY", "weight": 1}]
    assert http.delete(f"/api/v1/sessions/{second}").status_code == 204
    assert _state(neo4j_driver, owner) == ({}, [])
