"""The graph search queries: read-only, values as parameters, the label the only splice."""

from __future__ import annotations

import re

import pytest

from graphrag.graph import cypher
from graphrag.graph.labels import entity_label

pytestmark = pytest.mark.unit

KB = "0b6c1c52-8f3e-4c3a-9d1e-2f4a5b6c7d8e"
LABEL = entity_label(KB)
SEARCH_QUERIES = {
    "MATCH_ENTITIES": cypher.MATCH_ENTITIES,
    "ENTITY_RELATIONS": cypher.ENTITY_RELATIONS,
}
PARAMETERS = {
    "MATCH_ENTITIES": {"entity", "kgs", "probe"},
    "ENTITY_RELATIONS": {"ids", "types", "probe"},
}
WRITES = re.compile(r"\b(CREATE|MERGE|SET|DELETE|REMOVE|DETACH|LOAD|FOREACH|CALL)\b", re.I)


def _spliced(name: str) -> str:
    return SEARCH_QUERIES[name].format(label=LABEL)


@pytest.mark.parametrize("name", sorted(SEARCH_QUERIES))
def test_only_the_label_is_spliced(name: str) -> None:
    query = _spliced(name)
    assert "{label}" not in query and LABEL in query
    # After the splice only the label differs from the template: no other placeholder, no value.
    assert query.replace(LABEL, "{label}") == SEARCH_QUERIES[name].replace("{{", "{").replace(
        "}}", "}"
    )
    assert "'" not in query and '"' not in query


@pytest.mark.parametrize("name", sorted(SEARCH_QUERIES))
def test_values_are_the_expected_parameters(name: str) -> None:
    assert set(re.findall(r"\$(\w+)", _spliced(name))) == PARAMETERS[name]


@pytest.mark.parametrize("name", sorted(SEARCH_QUERIES))
def test_queries_only_read(name: str) -> None:
    assert WRITES.findall(_spliced(name)) == []


@pytest.mark.parametrize("name", sorted(SEARCH_QUERIES))
def test_every_node_is_of_the_base(name: str) -> None:
    query = _spliced(name)
    patterns = re.findall(r"\((\w*)(:?[\w]*)\)", query)
    node_patterns = [p for p in patterns if p[1]]
    # A node's resolved entity is read only one step from a node of the base.
    resolved = [p for p in node_patterns if p == ("x", ":ResolvedEntity")]
    assert query.count("-[:RESOLVED_AS]->(x:ResolvedEntity)") == len(resolved)
    kept = [p for p in node_patterns if p not in resolved]
    assert kept and all(label == f":{LABEL}" for _, label in kept)


def test_match_entities_keeps_unrelated_entities() -> None:
    query = _spliced("MATCH_ENTITIES")
    assert "n.name CONTAINS $entity" in query
    # The one step read is the node's resolved entity, in a list that may be empty: no filter.
    unfiltered = query.replace("head([(n)-[:RESOLVED_AS]->(x:ResolvedEntity) | x.id])", "")
    assert "EXISTS" not in query and "-[" not in unfiltered
    assert "CASE WHEN n.name = $entity THEN 0 ELSE 1 END, size(n.name), n.name" in query
    assert query.rstrip().endswith("LIMIT $probe")


def test_entity_relations_filter_and_order() -> None:
    query = _spliced("ENTITY_RELATIONS")
    assert "WHERE elementId(n) = $ids[rank]" in query
    assert "WHERE $types IS NULL OR type(r) IN $types" in query
    assert "WITH r, min(rank) AS first_rank" in query  # a relation between two matches once
    assert "ORDER BY first_rank, relation.type, relation.id\nLIMIT $probe" in query
