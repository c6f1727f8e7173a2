"""Every Cypher query of entity resolution, as named constants; values are always $parameters.

The lists a run's queries take (its documents, their entities, its links) ride in one map
parameter, `$batch`: Neo4j plans a query again for each size class of a list parameter (one, up
to ten, up to a hundred...), about a core-second for the candidate read, and again after every
schema change (a new base's index); a map keeps one plan for every batch size.

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

# Some documents' nodes not resolved yet (an administrator's pins among them), at most
# $max_entities of each, with their neighbours: each one's key, and `@` + its resolved entity's
# id when it has one (so "A. Moreau" and "Ada Moreau", once resolved together, are one shared
# neighbour); the (kg, name) constraint's index finds them.
DOCUMENT_PROFILES = """
UNWIND $batch.kgs AS kg
CALL (kg) {
  MATCH (n:GraphEntity {kg: kg})
  WHERE n.name IS NOT NULL AND n.key IS NOT NULL AND n.key <> ''
    AND NOT EXISTS { (n)-[:RESOLVED_AS]->(:ResolvedEntity) }
  WITH n ORDER BY n.name LIMIT $max_entities
  RETURN n
}
CALL (n) {
  NEIGHBOURS_OF_n
}
OPTIONAL MATCH (p:ResolutionPin {kb: $kb, kg: kg, key: n.key})
RETURN kg, n.name AS name, n.key AS key,
       coalesce(n.attributes, [])[..$max_attributes] AS attributes,
       neighbours, typed, p.target AS pinned_to, coalesce(p.apart, []) AS kept_from
""".replace("NEIGHBOURS_OF_n", _neighbours_of("n"))

# Candidates of each row (a document entity), by branch, each bounded, and kept in this order of
# evidence (`rank`) when they are more than $max_candidates: resolved entities of other
# documents' nodes of the same key (0); of nodes related to an entity of the same key as one of
# the row's neighbours (shared neighbours, 1); of keys whose name vector is near the row's key's
# (2, with the cosine); of keys holding the row's longest word (full-text index, 3; keys holding
# more of its words first).
# Each branch first names base nodes (`hits`); what a base node leads to is read once for all the
# rows, whose documents ($batch.kgs) are left out: the documents of a run share names, and a name
# every document repeats has as many nodes as documents.
# That read is bounded by $max_instances resolved nodes, not nodes: documents completed at once
# have many unresolved nodes of the key, and a bound on all nodes could read none of the
# resolved ones (a new entity made for a known name).
_OWN_KEY = """
OPTIONAL MATCH (own:BaseEntity {kb: $kb, key: row.key})"""
_WORD_HITS = """
CALL (row) {
  CALL db.index.fulltext.queryNodes('base_entity_words', row.lucene, {limit: $word_limit})
  YIELD node, score
  WITH node, score WHERE node.kb = $kb AND node.key <> row.key
  RETURN collect({b: node, rank: 3, score: 0.0, words: score}) AS worded
}"""
_VECTOR_HITS = """
CALL (row, own) {
  WITH own WHERE own IS NOT NULL AND own.embedding IS NOT NULL
  CALL db.index.vector.queryNodes('base_entity_vectors', $probe, own.embedding)
  YIELD node, score
  WITH node, score WHERE node.kb = $kb AND node.key <> row.key AND score >= $vector_min
  WITH node, score ORDER BY score DESC LIMIT $vector_limit
  RETURN collect({b: node, rank: 2, score: score, words: 0.0}) AS vectored
}"""
_NEIGHBOUR_HITS = """
CALL (row) {
  MATCH (:GraphEntity {kg: row.kg, name: row.name})--(:GraphEntity)-[:INSTANCE_OF]->(b:BaseEntity)
  WITH DISTINCT b
  RETURN collect({b: b, rank: 1, score: 0.0, words: 0.0}) AS near
}"""
# Per distinct base node: the resolved entities of other documents' nodes of its key (for ranks
# 0, 2 and 3), or of the nodes related to them in their documents (for rank 1).
_REACHED = """
CALL (plans) {
  UNWIND plans AS p
  UNWIND p.hits AS h
  WITH DISTINCT h.b AS b, h.rank = 1 AS relatives
  CALL (b, relatives) {
    WITH b WHERE NOT relatives
    MATCH (b)<-[:INSTANCE_OF]-(m:GraphEntity)-[:RESOLVED_AS]->(r:ResolvedEntity)
    WHERE NOT m.kg IN $batch.kgs
    WITH r LIMIT $max_instances
    RETURN DISTINCT r
    UNION
    WITH b WHERE relatives
    MATCH (b)<-[:INSTANCE_OF]-(x:GraphEntity)--(m:GraphEntity)-[:RESOLVED_AS]->(r:ResolvedEntity)
    WHERE NOT x.kg IN $batch.kgs AND m.kg = x.kg
    WITH r LIMIT $max_instances
    RETURN DISTINCT r
  }
  WITH b, relatives, collect(r) AS rs
  RETURN collect({b: b, relatives: relatives, rs: rs}) AS reached
}"""
# One row's candidates from its hits: each branch's best, at most $max_candidates
# ($neighbour_limit for shared neighbours), a resolved entity found by several hits once.
_ROW_FOUND = """
CALL (p, reached) {
  UNWIND p.hits AS h
  UNWIND coalesce(head([x IN reached WHERE x.b = h.b AND x.relatives = (h.rank = 1)]).rs, [])
    AS r
  WITH h.rank AS rank, r, max(h.score) AS score, max(h.words) AS words
  ORDER BY rank, score DESC, words DESC
  WITH rank, collect({r: r, score: score, words: words}) AS found
  UNWIND found[..CASE rank WHEN 1 THEN $neighbour_limit ELSE $max_candidates END] AS f
  RETURN f.r AS r, rank, f.score AS score, f.words AS words
}"""


# What the rules compare of each candidate: its members (document, name, key), their
# attributes and their neighbours' keys, each bounded. Read once per resolved entity however
# many of the run's entities found it (colleagues share their relatives, documents their
# common names).
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
    rules compare of the candidates, in one round trip: one row of `rows` (each document
    entity's candidates, best first) and `details` (each candidate once, however many entities
    of however many documents found it)."""
    parts = [_OWN_KEY] + [_WORD_HITS] * words + [_VECTOR_HITS] * vectors
    parts += [_NEIGHBOUR_HITS] * neighbours
    lists = ["worded"] * words + ["vectored"] * vectors + ["near"] * neighbours
    own = "[x IN [own] WHERE x IS NOT NULL | {b: x, rank: 0, score: 0.0, words: 0.0}]"
    return (
        "UNWIND $batch.rows AS row"
        + "".join(parts)
        + f"\nWITH row, {' + '.join([own, *lists])} AS hits\n"
        "WITH collect({row: row, hits: hits}) AS plans"
        + _REACHED
        + "\nUNWIND plans AS p"
        + _ROW_FOUND
        + "\nWITH p.row AS row, r, min(rank) AS rank, max(score) AS score, max(words) AS words\n"
        "ORDER BY rank, score DESC, words DESC\n"
        "WITH row, collect({r: r, score: score})[..$max_candidates] AS found\n"
        "WITH collect({kg: row.kg, name: row.name, found: found}) AS per_row\n"
        f"CALL (per_row) {{{_DETAILS}}}\n"
        "RETURN [p IN per_row | {kg: p.kg, name: p.name,\n"
        "        found: [f IN p.found | {id: f.r.id, score: f.score}]}] AS rows, details"
    )


# The decisions of a run's documents, in one transaction: links (to a resolved entity, made if
# need be) of nodes still unresolved (a task delivered twice writes nothing twice), then the
# homonyms kept apart.
WRITE_LINKS = """
UNWIND $batch.links AS row
MATCH (n:GraphEntity {kg: row.kg, name: row.name})
WHERE NOT EXISTS { (n)-[:RESOLVED_AS]->(:ResolvedEntity) }
MERGE (r:ResolvedEntity {id: row.target})
ON CREATE SET r.kb = $kb, r.name = row.canonical
CREATE (n)-[:RESOLVED_AS {rule: row.rule, score: row.score, reason: row.reason,
                          documents: row.documents, manual: row.manual, at: datetime()}]->(r)
"""

WRITE_APART = """
UNWIND $batch.apart AS row
MATCH (n:GraphEntity {kg: row.kg, name: row.name})
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
