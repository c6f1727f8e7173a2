"""Cross-document entity links on the real Neo4j + APOC: made at write time, read as one
neighbourhood, bounded for hubs, and removed with their documents without touching others."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import neo4j
import pytest

from graphrag.graph.neighbourhood import MatchKind, NameMatching, NeighbourhoodLimits, PassageRef
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


def _word_keys(
    store: Neo4jGraphStore, kb_id: uuid.UUID, names: list[str], limit: int
) -> dict[str, set[str]]:
    """Keys a neighbourhood read finds by the words of `names` alone, with the names that
    found each."""
    matching = NameMatching(names=names, word_limit=limit)
    rows = store.entity_neighbourhood(kb_id, [], None, WIDE, matching)
    found: dict[str, set[str]] = {}
    for row in rows:
        assert all(m.kind is MatchKind.WORDS and m.score == 1.0 for m in row.matches)
        found.setdefault(row.key, set()).update(m.name for m in row.matches)
    return found


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
        assert _word_keys(store, kb_id, ["Kimber"], 5) == {
            "kimber": {"Kimber"},
            "kimber manufacturing": {"Kimber"},
        }
        assert _word_keys(store, kb_id, ["kimber manufacturing"], 5) == {
            "kimber manufacturing": {"kimber manufacturing"}
        }
        assert _word_keys(store, kb_id, ["Nothing"], 5) == {}
        assert len(_word_keys(store, kb_id, ["Kimber"], 1)) == 1
    finally:
        store.delete_knowledge_base(other)


def _unit(dim: int, *hot: int) -> list[float]:
    """A vector of `dim` with equal weight on the `hot` positions."""
    vector = [0.0] * dim
    for i in hot:
        vector[i] = 1.0
    return vector


def test_near_name_vectors_find_keys_of_the_base_above_the_threshold(
    store: Neo4jGraphStore, kb_id: uuid.UUID, settings: Settings, neo4j_driver: neo4j.Driver
) -> None:
    dim = settings.embedding.dim
    other = uuid.uuid4()
    store.ensure_vector_index(dim)
    store.write_chunk_graph(
        kb_id, uuid.uuid4(), uuid.uuid4(), graph(["Kimber Manufacturing", "Montana"])
    )
    store.write_chunk_graph(other, uuid.uuid4(), uuid.uuid4(), graph(["Kimber Manufacturing"]))
    store.set_key_vectors(kb_id, {"kimber manufacturing": _unit(dim, 0), "montana": _unit(dim, 5)})
    store.set_key_vectors(other, {"kimber manufacturing": _unit(dim, 0)})
    neo4j_driver.execute_query("CALL db.awaitIndexes(60)")
    try:
        near = NameMatching(
            names=["Kimber Mfg."],
            vectors={"Kimber Mfg.": _unit(dim, 0, 1)},  # cosine 0.707 to "kimber manufacturing"
            vector_limit=5,
            vector_probe=50,
            vector_threshold=0.6,
        )
        rows = store.entity_neighbourhood(kb_id, [], None, WIDE, near)
        assert {r.key for r in rows} == {"kimber manufacturing"}
        (match,) = rows[0].matches
        assert match.kind is MatchKind.VECTOR and match.name == "Kimber Mfg."
        assert match.score == pytest.approx(0.5**0.5 / 2 + 0.5, abs=0.01)
        far = NameMatching(
            names=near.names,
            vectors=near.vectors,
            vector_limit=5,
            vector_probe=50,
            vector_threshold=0.9,
        )
        assert store.entity_neighbourhood(kb_id, [], None, WIDE, far) == []
        exact = store.entity_neighbourhood(kb_id, ["montana"], None, WIDE, near)
        assert {r.key: r.matches for r in exact}["montana"] == ()
    finally:
        store.delete_knowledge_base(other)


def test_a_passages_keys_are_read_without_their_relations_and_hubs_are_left_out(
    store: Neo4jGraphStore, kb_id: uuid.UUID
) -> None:
    # The passage names Orvex Arms (one other document names it too) and Montana, a hub named
    # in three more documents.
    doc, passage = uuid.uuid4(), uuid.uuid4()
    store.write_chunk_graph(
        kb_id,
        doc,
        passage,
        graph(["Orvex Arms", "Montana"], [("Orvex Arms", "based_in", "Montana")]),
    )
    second = uuid.uuid4()
    store.write_chunk_graph(kb_id, second, uuid.uuid4(), graph(["Orvex Arms"]))
    for _ in range(3):
        store.write_chunk_graph(kb_id, uuid.uuid4(), uuid.uuid4(), graph(["Montana"]))

    ref = PassageRef(str(passage), ("orvex arms", "montana", "not a key"))
    matching = NameMatching(passages=[ref], passage_max_documents=3)
    rows = store.entity_neighbourhood(kb_id, [], None, WIDE, matching)
    assert {(r.key, r.kg) for r in rows} == {("orvex arms", str(doc)), ("orvex arms", str(second))}
    assert all(
        [(m.kind, m.name) for m in r.matches] == [(MatchKind.PASSAGE, str(passage))] for r in rows
    )
    # Found only through a passage: its relations are not read.
    assert all(r.neighbours == () for r in rows)

    wider = NameMatching(passages=[ref], passage_max_documents=4)
    keys = {r.key for r in store.entity_neighbourhood(kb_id, [], None, WIDE, wider)}
    assert keys == {"orvex arms", "montana"}
    # The same key asked for by the question as well keeps its relations.
    both = store.entity_neighbourhood(kb_id, ["orvex arms"], [doc], WIDE, matching)
    assert [(n.key, n.type) for r in both for n in r.neighbours] == [("montana", "based_in")]
