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
    "ENTITY_KEY_CONSTRAINT",
    "ENTITY_RELATIONS",
    "MATCH_ENTITIES",
    "MERGE_NODES",
    "MERGE_RELATIONS",
    "SEARCH_NODE",
    "drop_name_index_ddl",
    "name_index_ddl",
]

ENTITY_KEY_CONSTRAINT = """
CREATE CONSTRAINT graph_entity_key IF NOT EXISTS
FOR (n:GraphEntity) REQUIRE (n.kg, n.name) IS UNIQUE
"""

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

# Endpoints were merged by MERGE_NODES earlier in the same transaction (the store adds any
# endpoint missing from the node list), so they are found through the (kg, name) constraint's
# index; the typed relation carries the chunks it was read in.
MERGE_RELATIONS = """
UNWIND $rows AS row
MATCH (a:GraphEntity {kg: row.kg, name: row.source})
MATCH (b:GraphEntity {kg: row.kg, name: row.target})
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


# SearchNode (chat path). Seeds: entities of the base (`{label}`) with at least one relation
# whose name contains one of $texts (case-sensitive), best first: exact name, shorter name,
# alphabetical, element id. $seed_probe = $max_seeds + 1 tells whether seeds were capped. Then
# one row per (seed, relation), in seed order, at most $row_probe = max rows + 1 of them.
# Nodes are told apart by element id: two documents' same-name entities stay two nodes.
SEARCH_NODE = """
MATCH (n:{label})
WHERE ($kgs IS NULL OR n.kg IN $kgs)
  AND any(t IN $texts WHERE n.name CONTAINS t)
  AND EXISTS {{ MATCH (n)-[]-(:{label}) }}
WITH n
ORDER BY CASE WHEN n.name IN $texts THEN 0 ELSE 1 END, size(n.name), n.name, elementId(n)
LIMIT $seed_probe
WITH collect(n) AS found
WITH found[..$max_seeds] AS seeds, size(found) > $max_seeds AS seeds_truncated
UNWIND range(0, size(seeds) - 1) AS rank
WITH seeds[rank] AS s, rank, seeds_truncated
MATCH (s)-[r]-(m:{label})
RETURN rank, seeds_truncated,
       s {{.name, .kg, .attributes, .chunks, id: elementId(s)}} AS seed,
       m {{.name, .kg, .attributes, .chunks, id: elementId(m)}} AS neighbour,
       {{id: elementId(r), type: type(r), chunks: r.chunks,
        source: elementId(startNode(r)), target: elementId(endNode(r))}} AS relation
ORDER BY rank, relation.type, neighbour.name, relation.id
LIMIT $row_probe
"""

# Graph-search candidates: every entity of the base whose name contains $entity
# (case-sensitive), related or not, in the same order as SearchNode's seeds; at most $probe.
MATCH_ENTITIES = """
MATCH (n:{label})
WHERE n.name CONTAINS $entity AND ($kgs IS NULL OR n.kg IN $kgs)
RETURN n {{.name, .kg, .attributes, .chunks, id: elementId(n)}} AS entity
ORDER BY CASE WHEN n.name = $entity THEN 0 ELSE 1 END, size(n.name), n.name, elementId(n)
LIMIT $probe
"""

# Relations touching the entities $ids (element ids, best first), optionally only of the types
# $types, each once (a relation between two of them counts for the better ranked), in the
# order of their best entity; at most $probe, with both endpoints.
ENTITY_RELATIONS = """
UNWIND range(0, size($ids) - 1) AS rank
MATCH (n:{label})
WHERE elementId(n) = $ids[rank]
MATCH (n)-[r]-(:{label})
WHERE $types IS NULL OR type(r) IN $types
WITH r, min(rank) AS first_rank
WITH r, first_rank, startNode(r) AS a, endNode(r) AS b
RETURN {{id: elementId(r), type: type(r), chunks: r.chunks,
        source: elementId(a), target: elementId(b)}} AS relation,
       a {{.name, .kg, .attributes, .chunks, id: elementId(a)}} AS source,
       b {{.name, .kg, .attributes, .chunks, id: elementId(b)}} AS target
ORDER BY first_rank, relation.type, relation.id
LIMIT $probe
"""


def name_index_ddl(label: str) -> str:
    """The name index of one namespace label (DDL takes no parameters, hence the splice)."""
    return f"CREATE INDEX name_{label} IF NOT EXISTS FOR (n:{label}) ON (n.name)"


def drop_name_index_ddl(label: str) -> str:
    """Drop the name index of a namespace label that is gone."""
    return f"DROP INDEX name_{label} IF EXISTS"
