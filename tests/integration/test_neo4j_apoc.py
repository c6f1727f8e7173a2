"""The local Neo4j server serves the APOC core procedures the graph store relies on, and no
other: the allowlist of deploy/neo4j/neo4j.conf (the stack's own) leaves the rest unloaded."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import neo4j
import pytest

pytestmark = pytest.mark.integration


@pytest.fixture
def label(neo4j_driver: neo4j.Driver) -> Iterator[str]:
    """A label no other test uses; every node carrying it is deleted afterwards."""
    name = f"ApocTest_{uuid.uuid4().hex}"
    yield name
    neo4j_driver.execute_query(f"MATCH (n:`{name}`) DETACH DELETE n")


def _count(driver: neo4j.Driver, label: str) -> int:
    records, _, _ = driver.execute_query(f"MATCH (n:`{label}`) RETURN count(n) AS n")
    return int(records[0]["n"])


def test_apoc_version_is_5_26(neo4j_driver: neo4j.Driver) -> None:
    records, _, _ = neo4j_driver.execute_query("RETURN apoc.version() AS version")
    assert str(records[0]["version"]).startswith("5.26")


def test_merge_node_with_two_labels_is_idempotent(neo4j_driver: neo4j.Driver, label: str) -> None:
    query = (
        "CALL apoc.merge.node([$label, 'Entity'], {name: $name}, {created: 1}, {seen: 2}) "
        "YIELD node RETURN labels(node) AS labels, node.created AS created, node.seen AS seen"
    )
    first, _, _ = neo4j_driver.execute_query(query, label=label, name="alpha")
    second, _, _ = neo4j_driver.execute_query(query, label=label, name="alpha")

    assert set(first[0]["labels"]) == {label, "Entity"}
    assert first[0]["created"] == 1 and first[0]["seen"] is None
    assert second[0]["seen"] == 2
    assert _count(neo4j_driver, label) == 1


def test_coll_union_merges_without_duplicates(neo4j_driver: neo4j.Driver) -> None:
    records, _, _ = neo4j_driver.execute_query(
        "RETURN apoc.coll.union(['doc-1', 'doc-2'], ['doc-2', 'doc-3']) AS ids"
    )
    assert sorted(records[0]["ids"]) == ["doc-1", "doc-2", "doc-3"]


def test_merge_relationship_is_idempotent(neo4j_driver: neo4j.Driver, label: str) -> None:
    neo4j_driver.execute_query(
        f"CREATE (:`{label}` {{name: 'a'}}), (:`{label}` {{name: 'b'}})",
    )
    query = (
        f"MATCH (a:`{label}` {{name: 'a'}}), (b:`{label}` {{name: 'b'}}) "
        "CALL apoc.merge.relationship(a, 'RELATED_TO', {kind: 'knows'}, {weight: 1.0}, b, "
        "{weight: 2.0}) YIELD rel RETURN rel.weight AS weight"
    )
    first, _, _ = neo4j_driver.execute_query(query)
    second, _, _ = neo4j_driver.execute_query(query)
    records, _, _ = neo4j_driver.execute_query(
        f"MATCH (:`{label}`)-[r:RELATED_TO]->(:`{label}`) RETURN count(r) AS n"
    )

    assert first[0]["weight"] == 1.0
    assert second[0]["weight"] == 2.0
    assert records[0]["n"] == 1


def test_periodic_iterate_deletes_in_batches(neo4j_driver: neo4j.Driver, label: str) -> None:
    neo4j_driver.execute_query(f"UNWIND range(1, 250) AS i CREATE (:`{label}` {{i: i}})")
    assert _count(neo4j_driver, label) == 250

    records, _, _ = neo4j_driver.execute_query(
        "CALL apoc.periodic.iterate($outer, 'DETACH DELETE n', {batchSize: 100}) "
        "YIELD batches, total, failedOperations RETURN batches, total, failedOperations",
        outer=f"MATCH (n:`{label}`) RETURN n",
    )

    assert records[0]["total"] == 250
    assert records[0]["batches"] == 3
    assert records[0]["failedOperations"] == 0
    assert _count(neo4j_driver, label) == 0


@pytest.mark.parametrize(
    "query",
    [
        "CALL apoc.load.json('file:///etc/passwd') YIELD value RETURN value",
        "CALL apoc.cypher.run('RETURN 1 AS one', {}) YIELD value RETURN value",
        "RETURN apoc.text.join(['a', 'b'], ',') AS joined",
    ],
)
def test_apoc_outside_the_allowlist_is_not_served(neo4j_driver: neo4j.Driver, query: str) -> None:
    with pytest.raises(neo4j.exceptions.ClientError) as refused:
        neo4j_driver.execute_query(query)
    assert refused.value.code in {
        "Neo.ClientError.Procedure.ProcedureNotFound",
        "Neo.ClientError.Statement.SyntaxError",  # an unknown function is caught when parsed
    }, refused.value.code
    records, _, _ = neo4j_driver.execute_query("RETURN apoc.version() AS version")
    assert records[0]["version"]  # the server goes on answering
