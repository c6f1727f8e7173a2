"""Every Cypher query of the graph store, as named constants. Values are always $parameters.

The only text spliced into a query is a label made by `graph.labels.entity_label`, which is built
from a validated UUID and so can hold nothing but `ENTITY`, hex digits and underscores.
"""

from __future__ import annotations

__all__ = [
    "BASE_ENTITY_KEY_CONSTRAINT",
    "BASE_ENTITY_WORD_INDEX",
    "COUNT_DOCUMENT_GRAPH",
    "DELETE_BASE_ENTITIES",
    "DELETE_BY_LABEL",
    "DELETE_BY_LABEL_INNER",
    "DELETE_BY_LABEL_OUTER",
    "DELETE_DOCUMENT_ENTITIES",
    "DELETE_ORPHAN_BASE_ENTITIES",
    "DOCUMENT_ENTITY_KEYS",
    "ENTITY_KEY_CONSTRAINT",
    "ENTITY_RELATIONS",
    "MATCH_ENTITIES",
    "MERGE_CHUNK_GRAPH",
    "SET_KEY_VECTORS",
    "drop_name_index_ddl",
    "name_index",
    "name_index_ddl",
    "neighbourhood_query",
    "vector_index_ddl",
]

ENTITY_KEY_CONSTRAINT = """
CREATE CONSTRAINT graph_entity_key IF NOT EXISTS
FOR (n:GraphEntity) REQUIRE (n.kg, n.name) IS UNIQUE
"""

# The base-level node that joins the per-document nodes of one name key: (kb, key) is unique,
# so two workers linking the same name at once meet on one node.
BASE_ENTITY_KEY_CONSTRAINT = """
CREATE CONSTRAINT base_entity_key IF NOT EXISTS
FOR (c:BaseEntity) REQUIRE (c.kb, c.key) IS UNIQUE
"""

# Word search over the base nodes' keys; `scope` ("k" + the base id without dashes) is one
# token, so a query can stay inside one base.
BASE_ENTITY_WORD_INDEX = """
CREATE FULLTEXT INDEX base_entity_words IF NOT EXISTS
FOR (c:BaseEntity) ON EACH [c.key, c.scope]
"""

# Name vectors of the base nodes, for near matches of a question's names ("Kimber Mfg." and
# "Kimber Manufacturing"). Written once per key at graph-build time (MERGE_CHUNK_GRAPH returns
# the keys still without one; two chunks naming a new key at once may both see it without, and
# the later one leaves the vector, and the vector index, as they are); a base node removed with
# its last document takes its vector with it. One map parameter, `$write`, for one plan (see below).
SET_KEY_VECTORS = """
UNWIND $write.rows AS row
MATCH (c:BaseEntity {kb: $write.kb, key: row.key})
WHERE c.embedding IS NULL
SET c.embedding = row.vector
"""

# One chunk's graph in one statement, with APOC's merges. apoc.merge.node splices the labels it
# is given into a query of its own, so merging under the document's label made the server plan
# new queries for every new document (26 ms a chunk of 3 entities and 2 relations, measured);
# merging under the constant `GraphEntity` label and adding the namespace labels with
# apoc.create.addLabels keeps one cached plan (6 ms). Relation types are a base's few tags.
# 1. One row per entity: merge on (kg, name), which the (kg, name) constraint's index finds and
#    locks, so the same entity read in two chunks of a document, even at once, is one node;
#    then its namespace labels, and the lists grown.
# 2. Relations: their endpoints are among the nodes (the store adds any endpoint missing from
#    the node list); the typed relation carries the chunks it was read in.
# 3. A node whose name has a key is linked to the base's node of that key (cross-document link),
#    made if need be. Last, so the base nodes, shared by many documents, are locked only for the
#    end of the transaction. One row back: the keys of those base nodes without a name vector.
# The lists come inside one map parameter, `$chunk`: Neo4j plans a statement again for each size
# class of a top-level list parameter, so a chunk of many entities was planned anew after every
# schema change; behind a map, one plan serves every size.
MERGE_CHUNK_GRAPH = """
CALL () {
  UNWIND $chunk.nodes AS row
  CALL apoc.merge.node(['GraphEntity'], {kg: row.kg, name: row.name},
                       {attributes: [], chunks: []}, {}) YIELD node
  CALL apoc.create.addLabels(node, row.labels) YIELD node AS labelled
  SET node.attributes = apoc.coll.union(coalesce(node.attributes, []), row.attributes),
      node.chunks = apoc.coll.union(coalesce(node.chunks, []), row.chunks),
      node.key = row.key
}
CALL () {
  UNWIND $chunk.relations AS row
  MATCH (a:GraphEntity {kg: row.kg, name: row.source})
  MATCH (b:GraphEntity {kg: row.kg, name: row.target})
  CALL apoc.merge.relationship(a, row.type, {}, {chunks: []}, b, {}) YIELD rel
  SET rel.chunks = apoc.coll.union(coalesce(rel.chunks, []), row.chunks)
}
CALL () {
  UNWIND $chunk.nodes AS row
  WITH row WHERE row.key <> ''
  MATCH (node:GraphEntity {kg: row.kg, name: row.name})
  MERGE (c:BaseEntity {kb: row.kb, key: row.key})
  ON CREATE SET c.scope = row.scope
  MERGE (node)-[:INSTANCE_OF]->(c)
  WITH c WHERE c.embedding IS NULL
  RETURN collect(DISTINCT c.key) AS keys
}
RETURN keys
"""

# A document's nodes are found by their `kg` through the (kg, name) constraint's index, not by
# the document's label: a label is spliced into the text, and every new text is planned again
# (about 25 ms of Neo4j CPU, once per document, against 1.4 ms for this one plan).
# Relations between entities only: the INSTANCE_OF link to the base node is not one.
COUNT_DOCUMENT_GRAPH = """
MATCH (n:GraphEntity {kg: $kg}) WHERE n.name IS NOT NULL
RETURN count(n) AS nodes, sum(COUNT { (n)-[]->(:GraphEntity) }) AS relations
"""

# The name keys of a document's nodes, read before the document is deleted.
DOCUMENT_ENTITY_KEYS = """
MATCH (n:GraphEntity {kg: $kg}) WHERE n.name IS NOT NULL AND n.key IS NOT NULL AND n.key <> ''
RETURN collect(DISTINCT n.key) AS keys
"""

# Base nodes of these keys that no document node links to any more (after a document delete).
DELETE_ORPHAN_BASE_ENTITIES = """
UNWIND $keys AS key
MATCH (c:BaseEntity {kb: $kb, key: key})
WHERE NOT EXISTS { (c)<-[:INSTANCE_OF]-() }
DELETE c
RETURN count(c) AS removed
"""

# Every base node of a knowledge base, in batches (after the base's entities are gone).
DELETE_BASE_ENTITIES = """
CALL apoc.periodic.iterate('MATCH (c:BaseEntity {kb: $kb}) RETURN c', 'DETACH DELETE c',
                           {batchSize: $batch_size, parallel: false, params: {kb: $kb}})
YIELD batches, total, errorMessages
RETURN batches, total, errorMessages
"""

# Every node of one document, in batches, found by `kg` through the (kg, name) constraint's
# index: one query text for all documents (a spliced document label was a new text, planned
# again, for every delete and re-parse).
DELETE_DOCUMENT_ENTITIES = """
CALL apoc.periodic.iterate(
  'MATCH (n:GraphEntity {kg: $kg}) WHERE n.name IS NOT NULL RETURN n', 'DETACH DELETE n',
  {batchSize: $batch_size, parallel: false, params: {kg: $kg}})
YIELD batches, total, errorMessages
RETURN batches, total, errorMessages
"""

# Batched deletion of a base's namespace with apoc.periodic.iterate (the label is spliced, see
# above).
DELETE_BY_LABEL_OUTER = "MATCH (n:{label}) RETURN n"
DELETE_BY_LABEL_INNER = "DETACH DELETE n"
DELETE_BY_LABEL = """
CALL apoc.periodic.iterate($outer, $inner, {batchSize: $batch_size, parallel: false})
YIELD batches, total, errorMessages
RETURN batches, total, errorMessages
"""


# Graph-search candidates: every entity of the base whose name contains $entity
# (case-sensitive), related or not, best first: exact name, shorter name, alphabetical, element
# id; at most $probe. Nodes are told apart by element id: two documents' same-name entities
# stay two nodes, each with the resolved entity it belongs to (if any).
MATCH_ENTITIES = """
MATCH (n:{label})
WHERE n.name CONTAINS $entity AND ($kgs IS NULL OR n.kg IN $kgs)
RETURN n {{.name, .kg, .attributes, .chunks, id: elementId(n),
          resolved: head([(n)-[:RESOLVED_AS]->(x:ResolvedEntity) | x.id])}} AS entity
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
       a {{.name, .kg, .attributes, .chunks, id: elementId(a),
          resolved: head([(a)-[:RESOLVED_AS]->(x:ResolvedEntity) | x.id])}} AS source,
       b {{.name, .kg, .attributes, .chunks, id: elementId(b),
          resolved: head([(b)-[:RESOLVED_AS]->(x:ResolvedEntity) | x.id])}} AS target
ORDER BY first_rank, relation.type, relation.id
LIMIT $probe
"""


# Where a neighbourhood read starts: base nodes of exact keys, each with no match record.
_EXACT_KEYS = """
UNWIND $keys AS key
MATCH (c:BaseEntity {kb: $kb, key: key})
RETURN c, null AS via
"""

# Base nodes holding every word of a name ("kimber" finds "kimber manufacturing"), at most
# $word_limit per name. Each $words entry's `lucene` is built from the name's words (letters and
# digits only, so no query syntax) and the base's scope token.
_WORD_KEYS = """
UNWIND $words AS q
CALL db.index.fulltext.queryNodes('base_entity_words', q.lucene, {limit: $word_limit})
YIELD node
WITH q, node WHERE node.kb = $kb
RETURN node AS c, {kind: 'words', name: q.name, score: 1.0} AS via
"""

# Base nodes whose name vector is near a name's ("Kimber Mfg." and "Kimber Manufacturing"). The
# vector index is shared by every base: $probe candidates are read, those of the base at a
# cosine similarity of at least $threshold kept, at most $vector_limit per name, best first.
_VECTOR_KEYS = """
UNWIND $vectors AS q
CALL (q) {
  CALL db.index.vector.queryNodes('base_entity_vectors', $probe, q.vector) YIELD node, score
  WITH node, score WHERE node.kb = $kb AND score >= $threshold
  RETURN node, score ORDER BY score DESC LIMIT $vector_limit
}
RETURN node AS c, {kind: 'vector', name: q.name, score: score} AS via
"""

# Base nodes of the entities read in given passages (the best hits of the other searches; the
# keys are kept on their chunk rows), so the ranking can step from a passage to the other
# documents naming its entities. A key named in more than $passage_max_documents documents is a
# hub and is left out: it links almost anything.
_PASSAGE_KEYS = """
UNWIND $passages AS p
UNWIND p.keys AS key
MATCH (c:BaseEntity {kb: $kb, key: key})
WHERE COUNT { (c)<-[:INSTANCE_OF]-() } <= $passage_max_documents
RETURN c, {kind: 'passage', name: p.chunk, score: 1.0} AS via
"""

# Per base node found: its document nodes (at most $max_instances, only of documents $kgs when
# given), each with its chunks and related entities (at most $max_neighbours; none for a key found
# only through a passage: its relations are the passage's business, not the question's); `via`
# says how the key was found (empty for an exact key), `asked` whether the question found it.
# Chunk lists are cut at $max_chunks, so a
# hub entity named in thousands of chunks costs no more than any other.
_NEIGHBOURHOOD = """
WITH c, via, asked, COUNT { (c)<-[:INSTANCE_OF]-() } AS instances
{instances}CALL (n, asked) {
  OPTIONAL MATCH (n)-[r]-(m:GraphEntity)
  WHERE $max_neighbours > 0 AND asked
  WITH r, m
  ORDER BY elementId(r)
  LIMIT $max_neighbours
  RETURN collect(CASE WHEN m IS NULL THEN null
                 ELSE {key: m.key, name: m.name, type: type(r), outgoing: startNode(r) = n,
                       chunks: m.chunks[..$max_chunks]}
                 END) AS neighbours
}
RETURN c.key AS key, via, instances, n.name AS name, n.kg AS kg,
       n.chunks[..$max_chunks] AS chunks, neighbours
"""


_INSTANCES = """CALL (c) {
  MATCH (c)<-[:INSTANCE_OF]-(n:GraphEntity)
  WHERE $kgs IS NULL OR n.kg IN $kgs
  RETURN n
  ORDER BY elementId(n)
  LIMIT $max_instances
}
"""

# The same, each node bringing the other nodes of its resolved entity (aliases named in other
# documents, `graph.resolution`), at most $max_instances in all.
_RESOLVED_INSTANCES = """CALL (c) {
  MATCH (c)<-[:INSTANCE_OF]-(n0:GraphEntity)
  WHERE $kgs IS NULL OR n0.kg IN $kgs
  WITH n0 ORDER BY elementId(n0) LIMIT $max_instances
  CALL (n0) {
    RETURN n0 AS n
    UNION
    MATCH (n0)-[:RESOLVED_AS]->(:ResolvedEntity)<-[:RESOLVED_AS]-(n:GraphEntity)
    WHERE $kgs IS NULL OR n.kg IN $kgs
    RETURN n LIMIT $max_instances
  }
  WITH DISTINCT n
  RETURN n
  ORDER BY elementId(n)
  LIMIT $max_instances
}
"""


def neighbourhood_query(
    words: bool, vectors: bool, passages: bool = False, resolved: bool = False
) -> str:
    """The neighbourhood read from exact keys, plus word and near-vector matches and the keys of
    given passages when asked (branches are joined only when used, so an unused index is never
    named)."""
    branches = (
        [_EXACT_KEYS] + [_WORD_KEYS] * words + [_VECTOR_KEYS] * vectors + [_PASSAGE_KEYS] * passages
    )
    found = "UNION ALL".join(branches)
    # `asked`: the question found the key (exactly, or by a word or near match), not only a
    # passage; an exact match's `via` is null, which collect() leaves out but count(*) counts.
    asked = "count(*) > count(via) OR any(v IN collect(via) WHERE v.kind <> 'passage')"
    tail = _NEIGHBOURHOOD.replace("{instances}", _RESOLVED_INSTANCES if resolved else _INSTANCES)
    return f"CALL () {{{found}}}\nWITH c, collect(via) AS via, {asked} AS asked{tail}"


def vector_index_ddl(dimensions: int) -> str:
    """The name-vector index of the base nodes (its size comes from the embedding settings)."""
    return (
        "CREATE VECTOR INDEX base_entity_vectors IF NOT EXISTS FOR (c:BaseEntity) ON c.embedding "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dimensions)}, "
        "`vector.similarity_function`: 'cosine'}}"
    )


def name_index(label: str) -> str:
    """The name of one namespace label's name index."""
    return f"name_{label}"


def name_index_ddl(label: str) -> str:
    """The name index of one namespace label (DDL takes no parameters, hence the splice)."""
    return f"CREATE INDEX {name_index(label)} IF NOT EXISTS FOR (n:{label}) ON (n.name)"


def drop_name_index_ddl(label: str) -> str:
    """Drop the name index of a namespace label that is gone."""
    return f"DROP INDEX {name_index(label)} IF EXISTS"
