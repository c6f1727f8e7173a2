"""Every Cypher query of the agent memory, as named constants. Values are always $parameters.

Nodes: `(:Memory {id, tenant, owner, text, embedding, importance, created_at, last_access,
access_count, kind, session_id})` (times in epoch ms) and `(:MemoryEntity {tenant, owner, key,
name, description, sessions, session_descriptions})`;
edges `(:Memory)-[:MENTIONS]->(:MemoryEntity)`,
`(:MemoryEntity)-[:RELATES {type, weight, sessions, increments}]->(:MemoryEntity)` and
`(:MemoryEntity)-[:SAME_AS]->(:GraphEntity)` towards a knowledge base's entity of the same name.
Everything is scoped by ($tenant, $owner). Similarities returned are Neo4j's cosine scores,
which are (1 + cosine) / 2; the Python side turns them back into cosines.
"""

from __future__ import annotations

__all__ = [
    "COUNT_FACTS",
    "CREATE_FACTS",
    "DELETE_FACT",
    "DELETE_SESSION_FACTS",
    "ENTITIES_BY_TEXT",
    "ENTITIES_OF_FACTS",
    "ENTITY_FACTS",
    "ENTITY_IN_TEXT",
    "ENTITY_TEXT_INDEX_NAME",
    "FORGET_SESSION_ENTITIES",
    "FORGET_SESSION_RELATIONS",
    "GET_FACT",
    "LINK_MENTIONS",
    "LINK_SAME_AS",
    "LIST_FACTS",
    "MEMORY_ENTITY_KEY",
    "MEMORY_ENTITY_TEXT_INDEX",
    "MEMORY_ID_UNIQUE",
    "MEMORY_OWNER_INDEX",
    "MEMORY_VECTOR_INDEX",
    "MERGE_ENTITIES",
    "MERGE_RELATES",
    "NEAREST_BY_INDEX",
    "NEAREST_BY_SCAN",
    "NEIGHBOURHOOD_ENTITY",
    "NEIGHBOURHOOD_FACTS",
    "NEIGHBOURHOOD_RELATIONS",
    "NEXT_HOP",
    "SUBGRAPH_ENTITIES",
    "SUBGRAPH_FACTS",
    "SUBGRAPH_RELATIONS",
    "TOUCH_FACTS",
    "UPSERT_FACT",
    "VECTOR_INDEX_NAME",
]

VECTOR_INDEX_NAME = "memory_embedding"

MEMORY_VECTOR_INDEX = """
CREATE VECTOR INDEX memory_embedding IF NOT EXISTS
FOR (m:Memory) ON m.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}}
"""

MEMORY_ID_UNIQUE = """
CREATE CONSTRAINT memory_id IF NOT EXISTS FOR (m:Memory) REQUIRE m.id IS UNIQUE
"""

MEMORY_OWNER_INDEX = """
CREATE INDEX memory_owner IF NOT EXISTS FOR (m:Memory) ON (m.tenant, m.owner)
"""

# Concurrent session closes of one owner meet on one entity node per key.
MEMORY_ENTITY_KEY = """
CREATE CONSTRAINT memory_entity_key IF NOT EXISTS
FOR (e:MemoryEntity) REQUIRE (e.tenant, e.owner, e.key) IS UNIQUE
"""

ENTITY_TEXT_INDEX_NAME = "memory_entity_text"

# Entity search by words of the name or the description.
MEMORY_ENTITY_TEXT_INDEX = """
CREATE FULLTEXT INDEX memory_entity_text IF NOT EXISTS
FOR (e:MemoryEntity) ON EACH [e.name, e.description]
"""

# Keyed on id: a re-run of the same write creates nothing new.
CREATE_FACTS = """
UNWIND $rows AS row
MERGE (m:Memory {id: row.id})
ON CREATE SET m.tenant = $tenant, m.owner = $owner, m.text = row.text,
              m.embedding = row.embedding, m.importance = row.importance, m.kind = row.kind,
              m.session_id = row.session_id, m.created_at = $now, m.last_access = $now,
              m.access_count = 0
RETURN count(m) AS facts
"""

# One fact per id, its text replaced in place (a session's summary grows, it is never copied).
UPSERT_FACT = """
MERGE (m:Memory {id: $id})
WITH m, m.text IS NULL AS created
SET m.tenant = $tenant, m.owner = $owner, m.text = $text, m.embedding = $embedding,
    m.importance = $importance, m.kind = $kind, m.session_id = $session_id,
    m.created_at = coalesce(m.created_at, $now), m.last_access = coalesce(m.last_access, $now),
    m.access_count = coalesce(m.access_count, 0)
RETURN created
"""

# The best `$limit` facts of the `m` rows in hand, by similarity to `$vector`.
_TOP_BY_SIMILARITY = """WITH m, vector.similarity.cosine(m.embedding, $vector) AS score
ORDER BY score DESC, m.created_at DESC
LIMIT $limit
RETURN m {.id, .text, .kind, .importance, .created_at, .last_access, .access_count,
          .session_id} AS fact, score
"""

# The vector index is global: read a pool, keep the owner's facts, tell the caller the pool
# size so it can fall back to an exact scan when other owners filled the pool.
NEAREST_BY_INDEX = """
CALL db.index.vector.queryNodes($index, $pool, $vector) YIELD node
WITH collect(node) AS pool
RETURN size(pool) AS pool_size,
       [m IN pool WHERE m.tenant = $tenant AND m.owner = $owner |
        {fact: m {.id, .text, .kind, .importance, .created_at, .last_access, .access_count,
                  .session_id},
         score: vector.similarity.cosine(m.embedding, $vector)}] AS hits
"""

# Facts stored without a vector (their embedding had no positive finite norm) have no score.
NEAREST_BY_SCAN = f"""
MATCH (m:Memory)
WHERE m.tenant = $tenant AND m.owner = $owner AND m.embedding IS NOT NULL
{_TOP_BY_SIMILARITY}"""

TOUCH_FACTS = """
UNWIND $ids AS id
MATCH (m:Memory {id: id})
WHERE m.tenant = $tenant AND m.owner = $owner
SET m.last_access = $now, m.access_count = m.access_count + 1
RETURN count(m) AS touched
"""

LIST_FACTS = """
MATCH (m:Memory)
WHERE m.tenant = $tenant AND m.owner = $owner
RETURN m {.id, .text, .kind, .importance, .created_at, .last_access, .access_count,
          .session_id} AS fact
ORDER BY m.created_at DESC, m.id
SKIP $skip LIMIT $limit
"""

COUNT_FACTS = """
MATCH (m:Memory)
WHERE m.tenant = $tenant AND m.owner = $owner
RETURN count(m) AS total
"""

GET_FACT = """
MATCH (m:Memory {id: $id})
WHERE m.tenant = $tenant AND m.owner = $owner
RETURN m {.id, .text, .kind, .importance, .created_at, .last_access, .access_count,
          .session_id} AS fact
"""

DELETE_FACT = """
MATCH (m:Memory {id: $id})
WHERE m.tenant = $tenant AND m.owner = $owner
DETACH DELETE m
RETURN count(*) AS deleted
"""

# A deleted chat session takes what was learnt from it along (Q/A, errors, files, summary).
DELETE_SESSION_FACTS = """
MATCH (m:Memory)
WHERE m.tenant = $tenant AND m.session_id = $session_id
DETACH DELETE m
RETURN count(*) AS deleted
"""

# The longest of the description parts in `parts`.
_LONGEST_PART = (
    "reduce(best = '', d IN parts | CASE WHEN size(d) > size(best) THEN d ELSE best END)"
)

# Each session's part is kept apart (parallel lists `sessions` / `session_descriptions`, the
# session's longest description) so that forgetting a session removes exactly its part; the
# entity's description is the longest part. An entity written before parts were recorded
# keeps its description as the part of the unnamed session ''.
MERGE_ENTITIES = """
UNWIND $rows AS row
MERGE (e:MemoryEntity {tenant: $tenant, owner: $owner, key: row.key})
ON CREATE SET e.name = row.name, e.description = '', e.created_at = $now,
              e.sessions = [], e.session_descriptions = []
WITH e, row, coalesce(e.sessions, ['']) AS sessions,
     coalesce(e.session_descriptions, [coalesce(e.description, '')]) AS parts
WITH e, row, sessions, parts,
     [i IN range(0, size(sessions) - 1) WHERE sessions[i] = $session_id] AS at
WITH e, CASE WHEN size(at) = 0 THEN sessions + $session_id ELSE sessions END AS sessions,
     CASE WHEN size(at) = 0 THEN parts + row.description
          ELSE [i IN range(0, size(parts) - 1) |
                CASE WHEN i = at[0] AND size(row.description) > size(parts[i])
                     THEN row.description ELSE parts[i] END] END AS parts
SET e.sessions = sessions, e.session_descriptions = parts,
    e.description = $LONGEST,
    e.updated_at = $now
RETURN count(e) AS entities
""".replace("$LONGEST", _LONGEST_PART)

# A row's `count` (its occurrences in the session) adds to the weight and to the session's
# increment (parallel lists
# `sessions` / `increments`); an edge written before increments were recorded keeps its
# weight as the increment of the unnamed session ''.
MERGE_RELATES = """
UNWIND $rows AS row
MATCH (a:MemoryEntity {tenant: $tenant, owner: $owner, key: row.source})
MATCH (b:MemoryEntity {tenant: $tenant, owner: $owner, key: row.target})
MERGE (a)-[r:RELATES {type: row.type}]->(b)
ON CREATE SET r.weight = 0, r.sessions = [], r.increments = []
WITH r, row, coalesce(r.sessions, ['']) AS sessions,
     coalesce(r.increments, [coalesce(r.weight, 0)]) AS increments
WITH r, row, sessions, increments,
     [i IN range(0, size(sessions) - 1) WHERE sessions[i] = $session_id] AS at
WITH r, CASE WHEN size(at) = 0 THEN sessions + $session_id ELSE sessions END AS sessions,
     CASE WHEN size(at) = 0 THEN increments + row.count
          ELSE [i IN range(0, size(increments) - 1) |
                CASE WHEN i = at[0] THEN increments[i] + row.count ELSE increments[i] END] END
     AS increments
SET r.sessions = sessions, r.increments = increments,
    r.weight = reduce(total = 0, x IN increments | total + x), r.updated_at = $now
RETURN count(r) AS relations
"""

# Forgetting a session: its increments leave the RELATES edges (an edge left with no session
# goes), then its description parts leave the entities; an entity left with no part, no edge
# and no fact mentioning it goes too.
FORGET_SESSION_RELATIONS = """
MATCH (:MemoryEntity {tenant: $tenant})-[r:RELATES]->(:MemoryEntity)
WHERE $session_id IN r.sessions
WITH r, [i IN range(0, size(r.sessions) - 1) WHERE r.sessions[i] <> $session_id] AS keep
WITH r, [i IN keep | r.sessions[i]] AS sessions, [i IN keep | r.increments[i]] AS increments
SET r.sessions = sessions, r.increments = increments,
    r.weight = reduce(total = 0, x IN increments | total + x)
WITH r, size(sessions) = 0 AS empty
FOREACH (_ IN CASE WHEN empty THEN [1] ELSE [] END | DELETE r)
RETURN count(*) AS relations
"""

FORGET_SESSION_ENTITIES = """
MATCH (e:MemoryEntity {tenant: $tenant})
WHERE $session_id IN e.sessions
WITH e, [i IN range(0, size(e.sessions) - 1) WHERE e.sessions[i] <> $session_id] AS keep
WITH e, [i IN keep | e.sessions[i]] AS sessions, [i IN keep | e.session_descriptions[i]] AS parts
SET e.sessions = sessions, e.session_descriptions = parts,
    e.description = $LONGEST
WITH e, size(sessions) = 0 AND NOT (e)-[:RELATES]-() AND NOT ()-[:MENTIONS]->(e) AS empty
FOREACH (_ IN CASE WHEN empty THEN [1] ELSE [] END | DETACH DELETE e)
RETURN count(*) AS entities
""".replace("$LONGEST", _LONGEST_PART)

LINK_MENTIONS = """
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
UNWIND row.keys AS key
MATCH (e:MemoryEntity {tenant: $tenant, owner: $owner, key: key})
MERGE (m)-[:MENTIONS]->(e)
RETURN count(*) AS links
"""

# Knowledge-base entities are reached only under the labels of the tenant's own bases.
LINK_SAME_AS = """
MATCH (n:GraphEntity)
WHERE toLower(n.name) IN $keys AND any(label IN labels(n) WHERE label IN $kb_labels)
MATCH (e:MemoryEntity {tenant: $tenant, owner: $owner, key: toLower(n.name)})
MERGE (e)-[:SAME_AS]->(n)
RETURN count(*) AS links
"""

# Known entities whose key occurs in $text (lower-cased): the name is looked for IN the text.
ENTITY_IN_TEXT = """
MATCH (e:MemoryEntity)
WHERE e.tenant = $tenant AND e.owner = $owner AND $text CONTAINS e.key
RETURN e.name AS name
ORDER BY size(e.key) DESC, e.key
"""

# Facts that mention the entities $keys or their direct neighbours in the memory graph.
ENTITY_FACTS = f"""
MATCH (e:MemoryEntity)
WHERE e.tenant = $tenant AND e.owner = $owner AND e.key IN $keys
OPTIONAL MATCH (e)-[:RELATES]-(n:MemoryEntity)
WITH collect(DISTINCT e) + collect(DISTINCT n) AS entities
UNWIND entities AS entity
MATCH (m:Memory)-[:MENTIONS]->(entity)
WHERE m.tenant = $tenant AND m.owner = $owner AND m.embedding IS NOT NULL
WITH DISTINCT m
{_TOP_BY_SIMILARITY}"""

NEIGHBOURHOOD_ENTITY = """
MATCH (e:MemoryEntity {tenant: $tenant, owner: $owner, key: $key})
OPTIONAL MATCH (e)-[:SAME_AS]->(n:GraphEntity)
RETURN e.name AS name, e.description AS description,
       [x IN collect(n) | x {.name, .kg}] AS same_as
"""

NEIGHBOURHOOD_RELATIONS = """
MATCH (e:MemoryEntity {tenant: $tenant, owner: $owner, key: $key})-[r:RELATES]-(o:MemoryEntity)
RETURN startNode(r) = e AS outgoing, r.type AS type, r.weight AS weight, o.name AS other
ORDER BY r.weight DESC, r.type, o.key
LIMIT $limit
"""

NEIGHBOURHOOD_FACTS = """
MATCH (m:Memory)-[:MENTIONS]->(e:MemoryEntity {tenant: $tenant, owner: $owner, key: $key})
RETURN m {.id, .text, .kind, .importance, .created_at, .last_access, .access_count,
          .session_id} AS fact
ORDER BY m.created_at DESC, m.id
LIMIT $limit
"""

# The full-text index is global: read a pool, keep the owner's entities.
ENTITIES_BY_TEXT = """
CALL db.index.fulltext.queryNodes($index, $query, {limit: $pool}) YIELD node, score
WHERE node.tenant = $tenant AND node.owner = $owner
RETURN node.key AS key, score
ORDER BY score DESC, key
LIMIT $limit
"""

# Entities the facts `$ids` mention (the vector side of an entity search).
ENTITIES_OF_FACTS = """
UNWIND $ids AS id
MATCH (m:Memory {id: id})-[:MENTIONS]->(e:MemoryEntity)
WHERE m.tenant = $tenant AND m.owner = $owner
RETURN id, collect(e.key) AS keys
"""

# One hop of a bounded walk: the entities one RELATES edge (either direction) away from the
# entities `$keys`, not yet `$seen`, at most `$limit` of them.
NEXT_HOP = """
UNWIND $keys AS key
MATCH (:MemoryEntity {tenant: $tenant, owner: $owner, key: key})-[:RELATES]-(o:MemoryEntity)
WHERE NOT o.key IN $seen
RETURN DISTINCT o.key AS key
ORDER BY key
LIMIT $limit
"""

SUBGRAPH_ENTITIES = """
UNWIND $keys AS key
MATCH (e:MemoryEntity {tenant: $tenant, owner: $owner, key: key})
RETURN e.key AS key, e.name AS name, e.description AS description
"""

# The RELATES edges between the entities `$keys`, heaviest first.
SUBGRAPH_RELATIONS = """
MATCH (a:MemoryEntity)-[r:RELATES]->(b:MemoryEntity)
WHERE a.tenant = $tenant AND a.owner = $owner AND a.key IN $keys
  AND b.tenant = $tenant AND b.owner = $owner AND b.key IN $keys
RETURN a.name AS source, b.name AS target, r.type AS type, r.weight AS weight
ORDER BY weight DESC, source, target, type
LIMIT $limit
"""

SUBGRAPH_FACTS = """
MATCH (m:Memory)-[:MENTIONS]->(e:MemoryEntity)
WHERE e.tenant = $tenant AND e.owner = $owner AND e.key IN $keys
WITH DISTINCT m
RETURN m {.id, .text, .kind, .importance, .created_at, .last_access, .access_count,
          .session_id} AS fact
ORDER BY m.created_at DESC, m.id
LIMIT $limit
"""
