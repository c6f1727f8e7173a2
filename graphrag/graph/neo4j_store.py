"""The Neo4j graph store: APOC merges batched with UNWIND, one write transaction per chunk."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from neo4j import Driver, ManagedTransaction
from neo4j.exceptions import ServiceUnavailable, SessionExpired, TransientError

from graphrag.errors import GraphStoreError
from graphrag.extraction.models import GraphData
from graphrag.graph import cypher
from graphrag.graph.labels import ENTITY_KEY_LABEL, entity_label
from graphrag.graph.store import GraphCounts
from graphrag.settings import Neo4jSettings

__all__ = ["Neo4jGraphStore"]

log = logging.getLogger(__name__)

# Faults that a later retry can outlive (a restart, a lost connection, a deadlock).
_UNREACHABLE = (ServiceUnavailable, SessionExpired, TransientError, OSError)


class Neo4jGraphStore:
    """Entities of a knowledge base under `ENTITY<kb_id>`, and of a document under `ENTITY<doc>`."""

    enabled = True

    def __init__(self, driver: Driver, settings: Neo4jSettings) -> None:
        self.driver = driver
        self.settings = settings

    def close(self) -> None:
        self.driver.close()

    def ensure_schema(self) -> None:
        """The uniqueness of (kg, name): concurrent merges of one entity then meet on one node.

        Without it, two chunks of a document naming the same entity, merged at the same time by
        two workers, can each create a node.
        """
        self.driver.execute_query(cypher.ENTITY_KEY_CONSTRAINT, database_=self.settings.database)

    def ensure_kb_indexes(self, kb_id: uuid.UUID) -> None:
        """The name index for the base's label, created once (IF NOT EXISTS)."""
        self.driver.execute_query(
            cypher.name_index_ddl(entity_label(kb_id)), database_=self.settings.database
        )

    def write_chunk_graph(
        self, kb_id: uuid.UUID, knowledge_id: uuid.UUID, chunk_id: uuid.UUID, graph: GraphData
    ) -> GraphCounts:
        """Merge one chunk's entities and relations in a single transaction (retried if transient).

        Re-running it for the same chunk changes nothing: merges are keyed on (name, document) and
        the chunk lists are unions.
        """
        labels = [ENTITY_KEY_LABEL, entity_label(kb_id), entity_label(knowledge_id)]
        kg, chunk = str(knowledge_id), str(chunk_id)
        nodes = [
            {
                "labels": labels,
                "name": n.name,
                "kg": kg,
                "attributes": n.attributes,
                "chunks": [chunk],
            }
            for n in graph.nodes
        ]
        relations = [
            {
                "labels": labels,
                "source": r.node1,
                "target": r.node2,
                "type": r.type,
                "kg": kg,
                "chunks": [chunk],
            }
            for r in graph.relations
        ]

        def work(tx: ManagedTransaction) -> GraphCounts:
            written_nodes = _single(tx, cypher.MERGE_NODES, nodes, "nodes")
            written_rels = _single(tx, cypher.MERGE_RELATIONS, relations, "relations")
            return GraphCounts(written_nodes, written_rels)

        try:
            with self.driver.session(database=self.settings.database) as session:
                return session.execute_write(work)
        except _UNREACHABLE as exc:
            raise GraphStoreError(f"graph write failed: {exc}") from exc

    def document_counts(self, knowledge_id: uuid.UUID) -> GraphCounts:
        """Entities and relations of one document, counted in the graph."""
        label = entity_label(knowledge_id)
        try:
            records, _, _ = self.driver.execute_query(
                cypher.COUNT_BY_LABEL.format(label=label), database_=self.settings.database
            )
        except _UNREACHABLE as exc:
            raise GraphStoreError(f"graph count failed: {exc}") from exc
        return GraphCounts(int(records[0]["nodes"]), int(records[0]["relations"]))

    def _delete_label(self, label: str) -> int:
        records, _, _ = self.driver.execute_query(
            cypher.DELETE_BY_LABEL,
            outer=cypher.DELETE_BY_LABEL_OUTER.format(label=label),
            inner=cypher.DELETE_BY_LABEL_INNER,
            batch_size=self.settings.delete_batch_size,
            database_=self.settings.database,
        )
        row = records[0]
        if row["errorMessages"]:
            raise GraphStoreError("graph delete failed", errors=row["errorMessages"])
        return int(row["total"])

    def delete_document(self, kb_id: uuid.UUID, knowledge_id: uuid.UUID) -> int:
        """Every node of the document, with its relations, in batches."""
        return self._delete_label(entity_label(knowledge_id))

    def delete_knowledge_base(self, kb_id: uuid.UUID) -> int:
        """Every node of the base, with its relations, in batches."""
        return self._delete_label(entity_label(kb_id))


def _single(tx: ManagedTransaction, query: str, rows: list[dict[str, Any]], key: str) -> int:
    if not rows:
        return 0
    record = tx.run(query, rows=rows).single(strict=True)
    return int(record[key])
