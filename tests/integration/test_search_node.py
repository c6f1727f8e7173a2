"""SearchNode on the real Neo4j + APOC: caps, ordering, seeds, documents kept apart."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import neo4j
import pytest

from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.graph.search_models import GraphSearchResult
from graphrag.settings import Settings
from tests.support.graph_data import drop_kb_graph, graph

pytestmark = pytest.mark.integration


@pytest.fixture
def store(neo4j_driver: neo4j.Driver, settings: Settings) -> Neo4jGraphStore:
    return Neo4jGraphStore(neo4j_driver, settings.neo4j)


@pytest.fixture
def kb_id(store: Neo4jGraphStore, neo4j_driver: neo4j.Driver) -> Iterator[uuid.UUID]:
    """A base id no other test uses; its whole graph is deleted afterwards."""
    kb = uuid.uuid4()
    store.ensure_kb_indexes(kb)
    yield kb
    drop_kb_graph(store, neo4j_driver, kb)


def _names(result: GraphSearchResult, ids: list[str]) -> list[str]:
    by_id = {node.id: node.name for node in result.nodes}
    return [by_id[i] for i in ids]


def _rank(name: str, texts: list[str]) -> tuple[bool, int, str]:
    return (name not in texts, len(name), name)


def test_seeds_capped_and_ordered(
    store: Neo4jGraphStore, kb_id: uuid.UUID, settings: Settings
) -> None:
    max_seeds = settings.neo4j.search_max_seeds
    related = ["Alpha"] + [f"Alpha{'z' * (i % 5)}{i}" for i in range(max_seeds + 50)]
    related.append("AAlpha")  # alphabetically first, but longer than the exact match
    unrelated = "Alpha!"  # short enough to rank high, but has no relation
    doc, chunk = uuid.uuid4(), uuid.uuid4()
    store.write_chunk_graph(
        kb_id,
        doc,
        chunk,
        graph([*related, unrelated, "Hub"], [(name, "LINKS", "Hub") for name in related]),
    )

    result = store.search_nodes(kb_id, ["Alpha"])

    expected = sorted(related, key=lambda n: _rank(n, ["Alpha"]))[:max_seeds]
    assert _names(result, result.seed_ids) == expected
    assert result.seeds_truncated and not result.rows_truncated and result.truncated
    names = {node.name for node in result.nodes}
    assert unrelated not in names
    assert names == {*expected, "Hub"}
    assert len(result.relations) == max_seeds
    assert all(node.kg == str(doc) and node.chunks == [str(chunk)] for node in result.nodes)


def test_rows_capped_in_seed_order(
    store: Neo4jGraphStore, kb_id: uuid.UUID, settings: Settings
) -> None:
    max_rows = settings.neo4j.search_max_rows
    per_seed = max_rows * 2 // 5  # three seeds: the first two fit, the third is cut
    seeds = ["Beta", "Beta1", "Beta22"]
    relations = [(s, "NEAR", f"N{k}-{j}") for k, s in enumerate(seeds) for j in range(per_seed)]
    store.write_chunk_graph(
        kb_id, uuid.uuid4(), uuid.uuid4(), graph([r[2] for r in relations] + seeds, relations)
    )

    result = store.search_nodes(kb_id, ["Beta"])

    assert result.rows_truncated and not result.seeds_truncated and result.truncated
    assert len(result.relations) == max_rows
    assert _names(result, result.seed_ids) == seeds
    per_source = {name: 0 for name in seeds}
    names = {node.id: node.name for node in result.nodes}
    for rel in result.relations:
        per_source[names[rel.source]] += 1
    assert per_source == {"Beta": per_seed, "Beta1": per_seed, "Beta22": max_rows - 2 * per_seed}


def test_exact_match_first_then_shorter_then_alphabetical(
    store: Neo4jGraphStore, kb_id: uuid.UUID
) -> None:
    names = ["Curie Institute", "Curie", "Curl", "Marie Curie", "Curb"]
    store.write_chunk_graph(
        kb_id,
        uuid.uuid4(),
        uuid.uuid4(),
        graph([*names, "Paris"], [(n, "IN", "Paris") for n in names]),
    )

    result = store.search_nodes(kb_id, ["Marie Curie", "Cur"])

    assert _names(result, result.seed_ids) == [
        "Marie Curie",  # exact match of one text, although longer
        "Curb",
        "Curl",
        "Curie",
        "Curie Institute",
    ]
    assert not result.truncated


def test_only_entities_with_relations_are_seeds(store: Neo4jGraphStore, kb_id: uuid.UUID) -> None:
    store.write_chunk_graph(
        kb_id,
        uuid.uuid4(),
        uuid.uuid4(),
        graph(["Gamma solo", "Gamma pair", "Delta"], [("Delta", "KNOWS", "Gamma pair")]),
    )

    result = store.search_nodes(kb_id, ["Gamma"])

    assert _names(result, result.seed_ids) == ["Gamma pair"]
    assert {node.name for node in result.nodes} == {"Gamma pair", "Delta"}
    [rel] = result.relations
    ids = {node.name: node.id for node in result.nodes}
    assert (rel.source, rel.type, rel.target) == (ids["Delta"], "KNOWS", ids["Gamma pair"])


def _two_paris(store: Neo4jGraphStore, kb_id: uuid.UUID) -> dict[str, list[str]]:
    """Paris in document A (two chunks) and in document B (one chunk); chunk ids per document."""
    doc_a, doc_b = uuid.uuid4(), uuid.uuid4()
    a1, a2, b1 = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    store.write_chunk_graph(
        kb_id, doc_a, a1, graph(["Paris", "France"], [("Paris", "IN", "France")])
    )
    store.write_chunk_graph(kb_id, doc_a, a2, graph(["Paris"]))
    store.write_chunk_graph(
        kb_id, doc_b, b1, graph(["Paris", "Seine"], [("Seine", "CROSSES", "Paris")])
    )
    return {str(doc_a): sorted([str(a1), str(a2)]), str(doc_b): [str(b1)]}


def test_same_name_in_two_documents_stays_apart(store: Neo4jGraphStore, kb_id: uuid.UUID) -> None:
    chunks = _two_paris(store, kb_id)

    result = store.search_nodes(kb_id, ["Paris"])

    paris = [node for node in result.nodes if node.name == "Paris"]
    assert len(paris) == 2 and paris[0].id != paris[1].id
    assert {node.kg: sorted(node.chunks) for node in paris} == chunks
    assert sorted(result.seed_ids) == sorted(node.id for node in paris)
    neighbour_of = {}
    names = {node.id: node for node in result.nodes}
    for rel in result.relations:
        ends = [names[rel.source], names[rel.target]]
        city = next(n for n in ends if n.name == "Paris")
        other = next(n for n in ends if n.name != "Paris")
        neighbour_of[city.kg] = other.name
        assert other.kg == city.kg
    doc_a, doc_b = chunks
    assert neighbour_of == {doc_a: "France", doc_b: "Seine"}


def test_knowledge_ids_restrict_the_seeds(store: Neo4jGraphStore, kb_id: uuid.UUID) -> None:
    chunks = _two_paris(store, kb_id)
    doc_b = uuid.UUID(list(chunks)[1])

    only_b = store.search_nodes(kb_id, ["Paris"], knowledge_ids=[doc_b])
    none = store.search_nodes(kb_id, ["Paris"], knowledge_ids=[])
    other = store.search_nodes(kb_id, ["Paris"], knowledge_ids=[uuid.uuid4()])

    assert {(n.name, n.kg) for n in only_b.nodes} == {("Paris", str(doc_b)), ("Seine", str(doc_b))}
    assert none.nodes == [] and other.nodes == []


def test_case_sensitive_substring(store: Neo4jGraphStore, kb_id: uuid.UUID) -> None:
    _two_paris(store, kb_id)

    assert store.search_nodes(kb_id, ["paris"]).nodes == []
    assert store.search_nodes(kb_id, ["PARIS"]).nodes == []
    assert len(store.search_nodes(kb_id, ["ari"]).seed_ids) == 2
    assert store.search_nodes(kb_id, ["", "  "]).nodes == []


def test_other_knowledge_base_is_not_searched(store: Neo4jGraphStore, kb_id: uuid.UUID) -> None:
    _two_paris(store, kb_id)

    assert store.search_nodes(uuid.uuid4(), ["Paris"]).nodes == []
