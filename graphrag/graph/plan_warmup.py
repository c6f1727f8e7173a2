"""Query plans of the chunk writes, made again right after a schema change.

A new base's name index is a schema change, and Neo4j drops every cached plan on one. The next
chunk writes of every base then wait for the server to plan them again (about a quarter of a
second each for the chunk merge, several times that while the workers' first writes keep both
cores busy), and a burst of the new base's first chunks all wait together. So the process that
changed the schema plans the writes at once, while nobody waits on them: it runs each one in a
transaction it rolls back, nothing is kept.

The writes take their lists inside one map parameter, which Neo4j plans once for every size
(a top-level list gets one plan per size class), so one statement of each is enough.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from neo4j import Driver
from neo4j.exceptions import Neo4jError

from graphrag.graph import cypher
from graphrag.graph.labels import ENTITY_KEY_LABEL, base_scope, entity_label
from graphrag.graph.neo4j_tx import UNREACHABLE
from graphrag.settings import Neo4jSettings

__all__ = ["warm_write_plans"]

log = logging.getLogger(__name__)

# Entities and relations of the chunk merge planned (any size gives the same plan).
_ENTITIES, _RELATIONS = 2, 1


def _chunk_params(kb_id: uuid.UUID, entities: int, relations: int) -> dict[str, Any]:
    kg, chunk = str(uuid.uuid4()), str(uuid.uuid4())
    names = [f"plan warm-up {i}" for i in range(entities)]
    nodes = [
        {
            # Labels that already exist: a label token, unlike the rows, outlives a rollback.
            "labels": [ENTITY_KEY_LABEL, entity_label(kb_id)],
            "name": name,
            "key": name,
            "kb": str(kb_id),
            "scope": base_scope(kb_id),
            "kg": kg,
            "attributes": [],
            "chunks": [chunk],
        }
        for name in names
    ]
    # Endpoints named nowhere: the relation rows match no node, so no relation type is created.
    links = [
        {"source": f"{name} (absent)", "target": name, "type": "", "kg": kg, "chunks": [chunk]}
        for name in names[:relations]
    ]
    return {"chunk": {"nodes": nodes, "relations": links}}


def _statements(kb_id: uuid.UUID) -> list[tuple[str, dict[str, Any]]]:
    vectors = {"kb": str(kb_id), "rows": [{"key": "", "vector": [0.0]}]}
    return [
        (cypher.MERGE_CHUNK_GRAPH, _chunk_params(kb_id, _ENTITIES, _RELATIONS)),
        (cypher.SET_KEY_VECTORS, {"write": vectors}),
        (cypher.COUNT_DOCUMENT_GRAPH, {"kg": str(uuid.uuid4())}),
    ]


def warm_write_plans(driver: Driver, settings: Neo4jSettings, kb_id: uuid.UUID) -> None:
    """After `kb_id`'s name index was created: wait for the index, then plan the chunk writes
    in a rolled-back transaction. Best effort: a fault is logged, the writes plan themselves."""
    try:
        with driver.session(database=settings.database) as session:
            session.run(
                "CALL db.awaitIndex($index, $timeout)",
                index=cypher.name_index(entity_label(kb_id)),
                timeout=round(settings.index_await_s),
            ).consume()
            with session.begin_transaction(timeout=settings.transaction_timeout_s) as tx:
                for query, params in _statements(kb_id):
                    tx.run(query, params).consume()
                tx.rollback()
    except (Neo4jError, *UNREACHABLE) as exc:
        log.warning("write plans not warmed for base %s: %s", kb_id, exc)
