"""Every Cypher query of entity resolution, as named constants; values are always $parameters.

The model: a document node `(:GraphEntity)` is linked by one `RESOLVED_AS` relation (rule,
score, reason, the documents that justify it, whether an administrator set it) to a
`(:ResolvedEntity {id, kb, name})`; a homonym kept apart carries a `KEPT_APART` relation to the
resolved entity it was kept from. An administrator's merge or split is also written as a
`(:ResolutionPin {kb, kg, key})` (its resolved entity, the ones it is kept from), which outlives
the document's nodes: a re-parse finds it and places the new nodes the same way.
"""

from __future__ import annotations

__all__ = [
    "AUDIT",
    "DELETE_BASE_RESOLUTION",
    "DELETE_ORPHAN_RESOLVED",
    "DELETE_PINS",
    "DOCUMENT_PROFILES",
    "KEY_NODES",
    "MANUAL_LINK",
    "PIN",
    "PIN_KEY_CONSTRAINT",
    "RESOLVED_ID_CONSTRAINT",
    "RESOLVED_KB_INDEX",
    "WITHDRAW_DOCUMENT",
    "WRITE_APART",
    "WRITE_LINKS",
    "candidate_query",
]


def _neighbours_of(node: str) -> str:
    """A subquery body: the neighbours of `node` (a variable in scope), at most
    $max_neighbours, as `neighbours` (each one's key and `@` + its resolved entity's id) and
    `typed` ([relation type + direction, key] per relation)."""
    return f"""OPTIONAL MATCH ({node})-[rel]-(nb:GraphEntity)
  WITH rel, nb WHERE nb.key IS NOT NULL AND nb.key <> ''
  WITH rel, nb LIMIT $max_neighbours
  OPTIONAL MATCH (nb)-[:RESOLVED_AS]->(nr:ResolvedEntity)
  RETURN collect(DISTINCT nb.key) + collect(DISTINCT '@' + nr.id) AS neighbours,
         collect([type(rel) + CASE WHEN startNode(rel) = {node} THEN '>' ELSE '<' END, nb.key])
           AS typed"""


RESOLVED_ID_CONSTRAINT = """
CREATE CONSTRAINT resolved_entity_id IF NOT EXISTS
FOR (r:ResolvedEntity) REQUIRE r.id IS UNIQUE
"""

RESOLVED_KB_INDEX = """
CREATE INDEX resolved_entity_kb IF NOT EXISTS FOR (r:ResolvedEntity) ON (r.kb)
"""

PIN_KEY_CONSTRAINT = """
CREATE CONSTRAINT resolution_pin_key IF NOT EXISTS
FOR (p:ResolutionPin) REQUIRE (p.kb, p.kg, p.key) IS UNIQUE
"""

# A document's nodes not resolved yet (an administrator's pins among them), with their
# neighbours: each one's key, and `@` + its resolved entity's id when it has one (so "A. Moreau"
# and "Ada Moreau", once resolved together, are one shared neighbour); the (kg, name)
# constraint's index finds them.
DOCUMENT_PROFILES = """
MATCH (n:GraphEntity {kg: $kg})
WHERE n.name IS NOT NULL AND n.key IS NOT NULL AND n.key <> ''
  AND NOT EXISTS { (n)-[:RESOLVED_AS]->(:ResolvedEntity) }
WITH n ORDER BY n.name LIMIT $max_entities
CALL (n) {
  NEIGHBOURS_OF_n
}
OPTIONAL MATCH (p:ResolutionPin {kb: $kb, kg: $kg, key: n.key})
RETURN n.name AS name, n.key AS key, coalesce(n.attributes, [])[..$max_attributes] AS attributes,
       neighbours, typed, p.target AS pinned_to, coalesce(p.apart, []) AS kept_from
""".replace("NEIGHBOURS_OF_n", _neighbours_of("n"))

# Candidates of each row, by branch, each bounded, and kept in this order of evidence (`rank`)
# when they are more than $max_candidates: resolved entities of other documents' nodes of the
# same key (0); of nodes related to an entity of the same key as one of the row's neighbours
# (shared neighbours, 1); of keys whose name vector is near the row's key's (2, with the cosine);
# of keys holding the row's longest word (full-text index, 3; keys holding more of its words
# first).
# A key's resolved document nodes are read $max_instances at most: a name every document repeats
# has as many nodes as documents, nearly all resolved to the same few entities. The bound counts
# resolved nodes only: documents completed at once have many unresolved nodes of the key, and
# a bound on all nodes could read none of the resolved ones (a new entity made for a known name).
_RESOLVED_OF_KEY = """CALL (node) {
    MATCH (node)<-[:INSTANCE_OF]-(m:GraphEntity)-[:RESOLVED_AS]->(r:ResolvedEntity)
    WHERE m.kg <> $kg
    WITH r LIMIT $max_instances
    RETURN DISTINCT r
  }"""
_SAME_KEY = """
  MATCH (node:BaseEntity {kb: $kb, key: row.key})
  RESOLVED_OF_KEY
  RETURN r, 0 AS rank, 0.0 AS score, 0.0 AS words LIMIT $max_candidates
""".replace("RESOLVED_OF_KEY", _RESOLVED_OF_KEY)
_WORDS = """
  CALL db.index.fulltext.queryNodes('base_entity_words', row.lucene, {limit: $word_limit})
  YIELD node, score AS hit
  WITH node, hit WHERE node.kb = $kb AND node.key <> row.key
  RESOLVED_OF_KEY
  WITH r, max(hit) AS words ORDER BY words DESC LIMIT $max_candidates
  RETURN r, 3 AS rank, 0.0 AS score, words
""".replace("RESOLVED_OF_KEY", _RESOLVED_OF_KEY)
_VECTORS = """
  MATCH (own:BaseEntity {kb: $kb, key: row.key}) WHERE own.embedding IS NOT NULL
  CALL db.index.vector.queryNodes('base_entity_vectors', $probe, own.embedding)
  YIELD node, score
  WITH node, score WHERE node.kb = $kb AND node.key <> row.key AND score >= $vector_min
  WITH node, score ORDER BY score DESC LIMIT $vector_limit
  RESOLVED_OF_KEY
  RETURN DISTINCT r, 2 AS rank, score, 0.0 AS words LIMIT $max_candidates
""".replace("RESOLVED_OF_KEY", _RESOLVED_OF_KEY)
# The shared-neighbour branch bounds the same way: the resolved relatives it reads of other
# documents' nodes of a neighbour's key, not those nodes (the newest may all wait their turn).
_NEIGHBOURS = """
  MATCH (:GraphEntity {kg: $kg, name: row.name})--(:GraphEntity)-[:INSTANCE_OF]->(b:BaseEntity)
  CALL (b) {
    MATCH (b)<-[:INSTANCE_OF]-(x2:GraphEntity)--(m:GraphEntity)-[:RESOLVED_AS]->(r:ResolvedEntity)
    WHERE x2.kg <> $kg AND m.kg = x2.kg
    WITH r LIMIT $max_instances
    RETURN DISTINCT r
  }
  RETURN DISTINCT r, 1 AS rank, 0.0 AS score, 0.0 AS words LIMIT $neighbour_limit
"""


# What the rules compare of each candidate: its members (document, name, key), their
# attributes and their neighbours' keys, each bounded. Read once per resolved entity however
# many of the document's entities found it (colleagues share their relatives).
_DETAILS = """
  UNWIND per_row AS p
  UNWIND p.found AS f
  WITH DISTINCT f.r AS r
  CALL (r) {
    MATCH (r)<-[:RESOLVED_AS]-(m:GraphEntity)
    WITH m LIMIT $max_members
    CALL (m) {
      NEIGHBOURS_OF_m
    }
    RETURN collect({kg: m.kg, name: m.name, typed: typed}) AS members,
           collect(neighbours) AS neighbours,
           collect(coalesce(m.attributes, [])[..$max_attributes]) AS attributes
  }
  RETURN collect({id: r.id, name: r.name, members: members, neighbours: neighbours,
                  attributes: attributes}) AS details
""".replace("NEIGHBOURS_OF_m", _neighbours_of("m"))


def candidate_query(words: bool, vectors: bool, neighbours: bool) -> str:
    """The candidate read with the branches in use (an unused one is never run), and what the
    rules compare of the candidates, in one round trip: one row of `rows` (each name's
    candidates, best first) and `details`."""
    branches = [_SAME_KEY] + [_WORDS] * words + [_VECTORS] * vectors + [_NEIGHBOURS] * neighbours
    inner = "UNION".join(f"\n  WITH row\n{b}" for b in branches)
    return (
        "UNWIND $rows AS row\n"
        f"CALL (row) {{{inner}}}\n"
        "WITH row, r, min(rank) AS rank, max(score) AS score, max(words) AS words\n"
        "ORDER BY rank, score DESC, words DESC\n"
        "WITH row, collect({r: r, score: score})[..$max_candidates] AS found\n"
        "WITH collect({name: row.name, found: found}) AS per_row\n"
        f"CALL (per_row) {{{_DETAILS}}}\n"
        "RETURN [p IN per_row | {name: p.name,\n"
        "        found: [f IN p.found | {id: f.r.id, score: f.score}]}] AS rows, details"
    )


# The decisions of one document's run, in one transaction: links (to a resolved entity, made if
# need be) of nodes still unresolved (a task delivered twice writes nothing twice), then the
# homonyms kept apart.
WRITE_LINKS = """
UNWIND $links AS row
MATCH (n:GraphEntity {kg: $kg, name: row.name})
WHERE NOT EXISTS { (n)-[:RESOLVED_AS]->(:ResolvedEntity) }
MERGE (r:ResolvedEntity {id: row.target})
ON CREATE SET r.kb = $kb, r.name = row.canonical
CREATE (n)-[:RESOLVED_AS {rule: row.rule, score: row.score, reason: row.reason,
                          documents: row.documents, manual: row.manual, at: datetime()}]->(r)
"""

WRITE_APART = """
UNWIND $apart AS row
MATCH (n:GraphEntity {kg: $kg, name: row.name})
MATCH (r:ResolvedEntity {id: row.target}) WHERE r.kb = $kb
MERGE (n)-[a:KEPT_APART]->(r)
SET a.rule = row.rule, a.reason = row.reason, a.manual = row.manual, a.at = datetime()
"""

# Before a document's nodes go: the automatic links of other documents' nodes that only this
# document justified are removed (their documents resolve again), and the resolved entities it
# touched are returned, to remove those left without a member once its nodes are gone.
WITHDRAW_DOCUMENT = """
MATCH (d:GraphEntity {kg: $kg})-[:RESOLVED_AS]->(r:ResolvedEntity)
WITH collect(DISTINCT r) AS touched
CALL (touched) {
  UNWIND touched AS r
  MATCH (r)<-[l:RESOLVED_AS]-(m:GraphEntity)
  WHERE m.kg <> $kg AND NOT l.manual AND size(l.documents) > 0
    AND all(doc IN l.documents WHERE doc = $kg)
  DELETE l
  RETURN collect(DISTINCT m.kg) AS documents
}
RETURN [r IN touched | r.id] AS resolved, documents
"""

# Resolved entities left without a member (and pinned by no administrator's decision).
DELETE_ORPHAN_RESOLVED = """
UNWIND $ids AS rid
MATCH (r:ResolvedEntity {id: rid})
WHERE NOT EXISTS { (r)<-[:RESOLVED_AS]-() }
  AND NOT EXISTS { MATCH (p:ResolutionPin {kb: r.kb}) WHERE p.target = r.id }
DETACH DELETE r
"""

DELETE_PINS = """
MATCH (p:ResolutionPin {kb: $kb, kg: $kg}) DELETE p
"""

DELETE_BASE_RESOLUTION = """
CALL apoc.periodic.iterate(
  'MATCH (x) WHERE (x:ResolvedEntity OR x:ResolutionPin) AND x.kb = $kb RETURN x',
  'DETACH DELETE x', {batchSize: $batch_size, parallel: false, params: {kb: $kb}})
YIELD batches, total, errorMessages
RETURN batches, total, errorMessages
"""

# The document nodes of one key in a base (for the audit, a merge or a split), optionally only
# of some documents.
KEY_NODES = """
MATCH (:BaseEntity {kb: $kb, key: $key})<-[:INSTANCE_OF]-(n:GraphEntity)
WHERE $kgs IS NULL OR n.kg IN $kgs
OPTIONAL MATCH (n)-[:RESOLVED_AS]->(r:ResolvedEntity)
RETURN n.kg AS kg, n.name AS name, n.key AS key, r.id AS resolved
LIMIT $limit
"""

# An administrator's placement of document nodes: their link replaced by a manual one, the
# resolved entity made if need be, kept-apart records to it removed.
MANUAL_LINK = """
UNWIND $rows AS row
MATCH (n:GraphEntity {kg: row.kg, name: row.name})
OPTIONAL MATCH (n)-[old:RESOLVED_AS]->(:ResolvedEntity)
DELETE old
WITH n, row
MERGE (r:ResolvedEntity {id: $target})
ON CREATE SET r.kb = $kb, r.name = $name
WITH n, r, row
OPTIONAL MATCH (n)-[apart:KEPT_APART]->(r)
DELETE apart
CREATE (n)-[:RESOLVED_AS {rule: $rule, score: 1.0, reason: $reason, documents: [],
                          manual: true, at: datetime()}]->(r)
WITH n, row
UNWIND row.apart AS away
MATCH (x:ResolvedEntity {id: away})
MERGE (n)-[a:KEPT_APART]->(x)
SET a.rule = $rule, a.reason = $reason, a.manual = true, a.at = datetime()
"""

PIN = """
UNWIND $rows AS row
MERGE (p:ResolutionPin {kb: $kb, kg: row.kg, key: row.key})
SET p.target = $target,
    p.apart = [x IN apoc.coll.union(coalesce(p.apart, []), row.apart) WHERE x <> $target]
"""

# What one key's document nodes are resolved to, with each resolved entity's members and the
# homonyms kept apart.
AUDIT = """
MATCH (:BaseEntity {kb: $kb, key: $key})<-[:INSTANCE_OF]-(n:GraphEntity)
WITH n ORDER BY n.kg LIMIT $limit
OPTIONAL MATCH (n)-[:RESOLVED_AS]->(r:ResolvedEntity)
WITH collect(n) AS nodes, collect(DISTINCT r) AS resolved
CALL (resolved) {
  UNWIND resolved AS r
  CALL (r) {
    MATCH (r)<-[l:RESOLVED_AS]-(m:GraphEntity)
    WITH m, l ORDER BY l.at, m.kg LIMIT $limit
    RETURN collect({kg: m.kg, name: m.name, rule: l.rule, score: l.score, reason: l.reason,
                    documents: l.documents, manual: l.manual}) AS members
  }
  RETURN collect({id: r.id, name: r.name, members: members}) AS entities
}
CALL (nodes) {
  UNWIND nodes AS n
  MATCH (n)-[a:KEPT_APART]->(x:ResolvedEntity)
  WITH n, a, x LIMIT $limit
  RETURN collect({kg: n.kg, name: n.name, from_id: x.id, from_name: x.name, rule: a.rule,
                  reason: a.reason, manual: a.manual}) AS apart
}
RETURN size(nodes) AS nodes, entities, apart
"""
