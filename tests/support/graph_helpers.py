"""Reading back what the graph store wrote, for assertions (read-only queries)."""

from __future__ import annotations

from typing import Any

from neo4j import Driver

from graphrag.graph.cypher import drop_name_index_ddl
from graphrag.graph.labels import entity_label

__all__ = ["graph_nodes", "graph_relations", "kb_graph_rule", "remove_label"]


def graph_nodes(driver: Driver, label_id: str) -> dict[str, dict[str, Any]]:
    """Nodes under `ENTITY<label_id>` keyed by name (tests use names unique per document)."""
    records, _, _ = driver.execute_query(
        f"MATCH (n:{entity_label(label_id)}) "
        "RETURN n.name AS name, n.kg AS kg, n.attributes AS attributes, n.chunks AS chunks, "
        "labels(n) AS labels"
    )
    return {r["name"]: dict(r) for r in records}


def graph_relations(driver: Driver, label_id: str) -> set[tuple[str, str, str]]:
    records, _, _ = driver.execute_query(
        f"MATCH (a:{entity_label(label_id)})-[r]->(b:GraphEntity) "
        "RETURN a.name AS a, type(r) AS t, b.name AS b"
    )
    return {(r["a"], r["t"], r["b"]) for r in records}


def remove_label(driver: Driver, label_id: str) -> None:
    """Delete the nodes under `ENTITY<label_id>`, and the base-level nodes and the name index
    when it is a base (a base dropped with its test database leaves no schema behind)."""
    label = entity_label(label_id)
    driver.execute_query(f"MATCH (n:{label}) DETACH DELETE n")
    driver.execute_query("MATCH (c:BaseEntity {kb: $kb}) DETACH DELETE c", kb=str(label_id))
    driver.execute_query(drop_name_index_ddl(label))


def kb_graph_rule(
    marker: str, nodes: list[dict[str, Any]], relations: list[dict[str, str]], **extra: Any
) -> dict[str, Any]:
    """A scripted-LLM rule answering the extraction of a chunk that contains `marker`."""
    return {
        "name": marker,
        "match": {"user": {"contains": marker}},
        "reply": {"content": {"nodes": nodes, "relations": relations}},
        **extra,
    }
