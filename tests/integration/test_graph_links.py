"""Cross-document entity links on the real Neo4j + APOC: made at write time, read as one
neighbourhood, bounded for hubs, and removed with their documents without touching others."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import neo4j
import pytest

from graphrag.graph.neighbourhood import NeighbourhoodLimits
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.settings import Settings
from tests.support.graph_data import drop_kb_graph, graph

pytestmark = pytest.mark.integration

WIDE = NeighbourhoodLimits(max_instances=100, max_neighbours=100, max_chunks=100)


@pytest.fixture
def store(neo4j_driver: neo4j.Driver, settings: Settings) -> Neo4jGraphStore:
    return Neo4jGraphStore(neo4j_driver, settings.neo4j)


@pytest.fixture
def kb_id(store: Neo4jGraphStore, neo4j_driver: neo4j.Driver) -> Iterator[uuid.UUID]:
    kb = uuid.uuid4()
    store.ensure_kb_indexes(kb)
    yield kb
    drop_kb_graph(store, neo4j_driver, kb)
    assert _base_keys(neo4j_driver, kb) == {}


def _base_keys(driver: neo4j.Driver, kb: uuid.UUID) -> dict[str, int]:
    """Base-level nodes of the base: key -> number of document nodes linked to it."""
    records, _, _ = driver.execute_query(
        "MATCH (c:BaseEntity {kb: $kb}) "
        "RETURN c.key AS key, COUNT { (c)<-[:INSTANCE_OF]-() } AS links",
        kb=str(kb),
    )
    return {r["key"]: r["links"] for r in records}


def test_same_name_in_two_documents_meets_on_one_base_node(
    store: Neo4jGraphStore, kb_id: uuid.UUID, neo4j_driver: neo4j.Driver
) -> None:
    doc_a, doc_b, chunk_a, chunk_b = uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    store.write_chunk_graph(
        kb_id,
        doc_a,
        chunk_a,
        graph(["Zentrac Rifles", "Orvex Arms"], [("Zentrac Rifles", "founded_from", "Orvex Arms")]),
    )
    store.write_chunk_graph(kb_id, doc_b, chunk_b, graph(["ORVEX ARMS'S"]))

    assert _base_keys(neo4j_driver, kb_id) == {"zentrac rifles": 1, "orvex arms": 2}
    assert store.document_counts(doc_a) == (2, 1)  # the base link is not a relation

    rows = store.entity_neighbourhood(kb_id, ["orvex arms", "unknown"], None, WIDE)
    assert {(r.kg, r.name, r.chunks) for r in rows} == {
        (str(doc_a), "Orvex Arms", (str(chunk_a),)),
        (str(doc_b), "ORVEX ARMS'S", (str(chunk_b),)),
    }
    assert all(r.instances == 2 for r in rows)
    from_a = next(r for r in rows if r.kg == str(doc_a))
    assert [(n.key, n.type) for n in from_a.neighbours] == [("zentrac rifles", "founded_from")]
    only_b = store.entity_neighbourhood(kb_id, ["orvex arms"], [doc_b], WIDE)
    assert [r.kg for r in only_b] == [str(doc_b)]


def test_deleting_a_document_keeps_the_other_documents_nodes_and_links(
    store: Neo4jGraphStore, kb_id: uuid.UUID, neo4j_driver: neo4j.Driver
) -> None:
    doc_a, doc_b = uuid.uuid4(), uuid.uuid4()
    store.write_chunk_graph(kb_id, doc_a, uuid.uuid4(), graph(["Orvex Arms", "Only In A"], []))
    store.write_chunk_graph(kb_id, doc_b, uuid.uuid4(), graph(["Orvex Arms"]))

    store.delete_document(kb_id, doc_a)
    assert _base_keys(neo4j_driver, kb_id) == {"orvex arms": 1}
    rows = store.entity_neighbourhood(kb_id, ["orvex arms", "only in a"], None, WIDE)
    assert [r.kg for r in rows] == [str(doc_b)]

    store.delete_document(kb_id, doc_b)
    assert _base_keys(neo4j_driver, kb_id) == {}


def test_a_hub_entity_reads_within_the_caps(store: Neo4jGraphStore, kb_id: uuid.UUID) -> None:
    hub_doc = uuid.uuid4()
    for i in range(30):
        store.write_chunk_graph(
            kb_id,
            hub_doc,
            uuid.uuid4(),
            graph(["Hub", f"Spoke {i}"], [("Hub", "has", f"Spoke {i}")]),
        )
    for _ in range(8):
        store.write_chunk_graph(kb_id, uuid.uuid4(), uuid.uuid4(), graph(["Hub"]))
    limits = NeighbourhoodLimits(max_instances=5, max_neighbours=4, max_chunks=3)

    rows = store.entity_neighbourhood(kb_id, ["hub"], None, limits)

    assert len(rows) == 5 and all(r.instances == 9 for r in rows)
    assert all(len(r.chunks) <= 3 and len(r.neighbours) <= 4 for r in rows)
    none = NeighbourhoodLimits(max_instances=5, max_neighbours=0, max_chunks=3)
    assert all(not r.neighbours for r in store.entity_neighbourhood(kb_id, ["hub"], None, none))


def test_keys_holding_every_word_of_a_name_stay_inside_the_base(
    store: Neo4jGraphStore, kb_id: uuid.UUID, neo4j_driver: neo4j.Driver
) -> None:
    other = uuid.uuid4()
    store.ensure_schema()
    store.write_chunk_graph(
        kb_id, uuid.uuid4(), uuid.uuid4(), graph(["Kimber Manufacturing", "Kimber", "Montana"])
    )
    store.write_chunk_graph(other, uuid.uuid4(), uuid.uuid4(), graph(["Kimber America"]))
    neo4j_driver.execute_query("CALL db.awaitIndexes(60)")
    try:
        found = store.keys_by_words(kb_id, ["Kimber", "kimber manufacturing", "Nothing"], 5)
        assert sorted(found["Kimber"]) == ["kimber", "kimber manufacturing"]
        assert found["kimber manufacturing"] == ["kimber manufacturing"]
        assert found.get("Nothing", []) == []
        assert store.keys_by_words(kb_id, ["Kimber"], 1)["Kimber"] in (
            ["kimber"],
            ["kimber manufacturing"],
        )
    finally:
        store.delete_knowledge_base(other)
