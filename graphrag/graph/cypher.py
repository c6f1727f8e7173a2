"""Every Cypher query of the graph store, as named constants. Values are always $parameters.

The only text spliced into a query is a label made by `graph.labels.entity_label`, which is built
from a validated UUID and so can hold nothing but `ENTITY`, hex digits and underscores.
"""

from __future__ import annotations

__all__ = [
    "COUNT_BY_LABEL",
    "DELETE_BY_LABEL",
    "DELETE_BY_LABEL_INNER",
    "DELETE_BY_LABEL_OUTER",
    "MERGE_NODES",
    "MERGE_RELATIONS",
    "name_index_ddl",
]

# One row per entity: merge on (name, kg) under both namespace labels, then grow the lists, so
# the same entity read in two chunks of a document is one node listing both chunks.
MERGE_NODES = """
UNWIND $rows AS row
CALL apoc.merge.node(row.labels, {name: row.name, kg: row.kg},
                     {attributes: [], chunks: []}, {}) YIELD node
SET node.attributes = apoc.coll.union(coalesce(node.attributes, []), row.attributes),
    node.chunks = apoc.coll.union(coalesce(node.chunks, []), row.chunks)
RETURN count(node) AS nodes
"""

# Endpoints are merged the same way (they exist already: the parser lists every endpoint as a
# node), then the typed relation carries the chunks it was read in.
MERGE_RELATIONS = """
UNWIND $rows AS row
CALL apoc.merge.node(row.labels, {name: row.source, kg: row.kg},
                     {attributes: [], chunks: []}, {}) YIELD node AS a
CALL apoc.merge.node(row.labels, {name: row.target, kg: row.kg},
                     {attributes: [], chunks: []}, {}) YIELD node AS b
CALL apoc.merge.relationship(a, row.type, {}, {chunks: []}, b, {}) YIELD rel
SET rel.chunks = apoc.coll.union(coalesce(rel.chunks, []), row.chunks)
RETURN count(rel) AS relations
"""

COUNT_BY_LABEL = """
MATCH (n:{label})
RETURN count(n) AS nodes, sum(COUNT {{ (n)-[]->() }}) AS relations
"""

# Batched deletion of a namespace with apoc.periodic.iterate (the label is spliced, see above).
DELETE_BY_LABEL_OUTER = "MATCH (n:{label}) RETURN n"
DELETE_BY_LABEL_INNER = "DETACH DELETE n"
DELETE_BY_LABEL = """
CALL apoc.periodic.iterate($outer, $inner, {batchSize: $batch_size, parallel: false})
YIELD batches, total, errorMessages
RETURN batches, total, errorMessages
"""


def name_index_ddl(label: str) -> str:
    """The name index of one namespace label (DDL takes no parameters, hence the splice)."""
    return f"CREATE INDEX name_{label} IF NOT EXISTS FOR (n:{label}) ON (n.name)"
