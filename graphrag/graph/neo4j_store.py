"""The Neo4j graph store: APOC merges batched with UNWIND, one write transaction per chunk."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from neo4j import Driver, ManagedTransaction
from neo4j.exceptions import Neo4jError

from graphrag.errors import GraphDataError, GraphSearchTimeoutError, GraphStoreError
from graphrag.graph import cypher
from graphrag.graph.labels import ENTITY_KEY_LABEL, base_scope, entity_label
from graphrag.graph.models import GraphData
from graphrag.graph.names import name_key, name_tokens
from graphrag.graph.neighbourhood import (
    KeyInstance,
    NameMatching,
    NeighbourhoodLimits,
    key_instance,
)
from graphrag.graph.neo4j_tx import REJECTED, Rows, run_statements, run_transaction
from graphrag.graph.plan_warmup import warm_write_plans
from graphrag.graph.search_models import (
    EntityMatches,
    GraphEntity,
    GraphLink,
    RelationMatches,
)
from graphrag.graph.store import GraphCounts
from graphrag.graph.vector_checks import VectorUse, searchable_only
from graphrag.settings import Neo4jSettings

__all__ = ["Neo4jGraphStore"]

log = logging.getLogger(__name__)

# What a failure of these statements is reported as ("<action> failed: ...").
_SCHEMA = "graph schema update"
_DELETE = "graph delete"
# What Neo4j answers for a transaction stopped at its timeout (the client's, or the server's).
_TIMED_OUT = frozenset(
    {
        "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
        "Neo.ClientError.Transaction.TransactionTimedOut",
        "Neo.TransientError.Transaction.TransactionTimedOut",
    }
)


class Neo4jGraphStore:
    """Entities of a knowledge base under `ENTITY<kb_id>`, and of a document under `ENTITY<doc>`."""

    enabled = True

    def __init__(self, driver: Driver, settings: Neo4jSettings) -> None:
        self.driver = driver
        self.settings = settings

    def close(self) -> None:
        self.driver.close()

    def ensure_vector_index(self, dimensions: int) -> None:
        """The index of the base nodes' name vectors (IF NOT EXISTS)."""
        self._write(cypher.vector_index_ddl(dimensions), {}, action=_SCHEMA)

    def ensure_schema(self) -> None:
        """The uniqueness of (kg, name): concurrent merges of one entity then meet on one node.

        Without it, two chunks of a document naming the same entity, merged at the same time by
        two workers, can each create a node.
        """
        for schema in (
            cypher.ENTITY_KEY_CONSTRAINT,
            cypher.BASE_ENTITY_KEY_CONSTRAINT,
            cypher.BASE_ENTITY_WORD_INDEX,
        ):
            self._write(schema, {}, action=_SCHEMA)

    def ensure_kb_indexes(self, kb_id: uuid.UUID) -> None:
        """The name index for the base's label, created once (IF NOT EXISTS); then the chunk
        writes planned again, since the schema change dropped every cached plan."""
        self._write(cypher.name_index_ddl(entity_label(kb_id)), {}, action=_SCHEMA)
        warm_write_plans(self.driver, self.settings, kb_id)

    def write_chunk_graph(
        self, kb_id: uuid.UUID, knowledge_id: uuid.UUID, chunk_id: uuid.UUID, graph: GraphData
    ) -> list[str]:
        """Merge one chunk's entities and relations in a single transaction (retried if transient);
        the name keys of the base nodes it links to that have no name vector yet.

        Re-running it for the same chunk changes nothing: merges are keyed on (name, document) and
        the chunk lists are unions. The document's totals are read by `document_counts`.
        """
        labels = [ENTITY_KEY_LABEL, entity_label(kb_id), entity_label(knowledge_id)]
        kb, kg, chunk = str(kb_id), str(knowledge_id), str(chunk_id)
        scope = base_scope(kb_id)
        nodes = [
            {
                "labels": labels,
                "name": n.name,
                "key": name_key(n.name),
                "kb": kb,
                "scope": scope,
                "kg": kg,
                "attributes": n.attributes,
                "chunks": [chunk],
            }
            for n in graph.nodes
        ]
        named = {n.name for n in graph.nodes}
        endpoints = dict.fromkeys(
            name for r in graph.relations for name in (r.node1, r.node2) if name not in named
        )
        # An endpoint missing from the node list is created if need be, but was not "read" as an
        # entity in this chunk: it gets no chunk of its own (as before relations were batched).
        nodes += [
            {
                "labels": labels,
                "name": name,
                "key": name_key(name),
                "kb": kb,
                "scope": scope,
                "kg": kg,
                "attributes": [],
                "chunks": [],
            }
            for name in endpoints
        ]
        relations = [
            {
                "source": r.node1,
                "target": r.node2,
                "type": r.type,
                "kg": kg,
                "chunks": [chunk],
            }
            for r in graph.relations
        ]

        def work(tx: ManagedTransaction) -> list[str]:
            chunk_graph = {"nodes": nodes, "relations": relations}
            merged = tx.run(cypher.MERGE_CHUNK_GRAPH, chunk=chunk_graph)
            return [str(k) for k in merged.single(strict=True)["keys"]]

        try:
            return run_transaction(
                self.driver, self.settings, work, write=True, action="graph write"
            )
        except REJECTED as exc:
            raise GraphDataError(f"graph write refused: {_describe(exc)}") from exc

    def document_counts(self, knowledge_id: uuid.UUID) -> GraphCounts:
        """Entities and relations of one document, counted in the graph."""
        row = self._read(cypher.COUNT_DOCUMENT_GRAPH, {"kg": str(knowledge_id)})[0]
        return GraphCounts(int(row["nodes"]), int(row["relations"]))

    def _delete_batched(self, query: str, params: dict[str, Any]) -> int:
        """How many nodes a batched (`apoc.periodic.iterate`) delete removed; a batch that failed
        raises `GraphStoreError` with APOC's messages."""
        row = self._write(query, params, action=_DELETE)[0]
        if row["errorMessages"]:
            raise GraphStoreError(f"{_DELETE} failed", errors=row["errorMessages"])
        return int(row["total"])

    def _delete_label(self, label: str) -> int:
        outer = cypher.DELETE_BY_LABEL_OUTER.format(label=label)
        return self._delete_batched(
            cypher.DELETE_BY_LABEL,
            {
                "outer": outer,
                "inner": cypher.DELETE_BY_LABEL_INNER,
                "batch_size": self.settings.delete_batch_size,
            },
        )

    def delete_document(self, kb_id: uuid.UUID, knowledge_id: uuid.UUID) -> int:
        """Every node of the document, with its relations, in batches; then the base nodes that
        only this document linked to. Other documents' nodes and links stay as they are."""
        kg = str(knowledge_id)
        keys = self._read(cypher.DOCUMENT_ENTITY_KEYS, {"kg": kg})[0]["keys"]
        removed = self._delete_batched(
            cypher.DELETE_DOCUMENT_ENTITIES,
            {"kg": kg, "batch_size": self.settings.delete_batch_size},
        )
        self._write(
            cypher.DELETE_ORPHAN_BASE_ENTITIES,
            {"kb": str(kb_id), "keys": list(keys)},
            action=_DELETE,
        )
        return removed

    def delete_knowledge_base(self, kb_id: uuid.UUID) -> int:
        """Every node of the base, with its relations, in batches, then the base's name index."""
        label = entity_label(kb_id)
        removed = self._delete_label(label)
        self._delete_batched(
            cypher.DELETE_BASE_ENTITIES,
            {"kb": str(kb_id), "batch_size": self.settings.delete_batch_size},
        )
        self._write(cypher.drop_name_index_ddl(label), {}, action=_SCHEMA)
        return removed

    def set_key_vectors(self, kb_id: uuid.UUID, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store the name vectors of base nodes (a key without a node, or whose node has one, is
        left as it is). A vector without a positive finite norm is not stored (counted): the
        index would refuse it, and the key is still found exactly and by its words."""
        kept = searchable_only(VectorUse.ENTITY_NAME, vectors)
        rows = [{"key": key, "vector": list(vector)} for key, vector in kept.items()]
        if not rows:
            return
        params = {"write": {"kb": str(kb_id), "rows": rows}}
        self._write(cypher.SET_KEY_VECTORS, params, action="graph write")

    def entity_neighbourhood(
        self,
        kb_id: uuid.UUID,
        keys: Sequence[str],
        knowledge_ids: Sequence[uuid.UUID] | None,
        limits: NeighbourhoodLimits,
        matching: NameMatching | None = None,
    ) -> list[KeyInstance]:
        """The document nodes of the base linked to these name keys, and to the keys `matching`
        finds for the question's names, with their neighbours: one read."""
        match = matching or NameMatching()
        words = _word_queries(kb_id, match.names) if match.word_limit > 0 else []
        vectors = (
            [{"name": name, "vector": list(v)} for name, v in match.vectors.items()]
            if match.vector_limit > 0
            else []
        )
        passages = [{"chunk": p.chunk_id, "keys": list(p.keys)} for p in match.passages if p.keys]
        if (not keys and not words and not vectors and not passages) or (
            knowledge_ids is not None and not knowledge_ids
        ):
            return []
        rows = self._read(
            cypher.neighbourhood_query(
                words=bool(words),
                vectors=bool(vectors),
                passages=bool(passages),
                resolved=limits.follow_resolution,
            ),
            {
                "passages": passages,
                "passage_max_documents": match.passage_max_documents,
                "kb": str(kb_id),
                "keys": list(keys),
                "words": words,
                "word_limit": match.word_limit,
                "vectors": vectors,
                "vector_limit": match.vector_limit,
                "probe": match.vector_probe,
                "threshold": match.vector_threshold,
                "kgs": _kg_list(knowledge_ids),
                "max_instances": limits.max_instances,
                "max_neighbours": limits.max_neighbours,
                "max_chunks": limits.max_chunks,
            },
        )
        return [key_instance(row) for row in rows]

    def _read(self, query: str, params: dict[str, Any]) -> Rows:
        """The rows of one query run in a read transaction, bounded by the transaction timeout."""
        return run_statements(
            self.driver, self.settings, [(query, params)], write=False, action="graph read"
        )[0]

    def _write(self, query: str, params: dict[str, Any], *, action: str) -> Rows:
        """The rows of one query run in a write transaction, bounded by the transaction timeout;
        an unreachable server raises `GraphStoreError("<action> failed: ...")`."""
        return run_statements(
            self.driver, self.settings, [(query, params)], write=True, action=action
        )[0]

    def match_entities(
        self,
        kb_id: uuid.UUID,
        entity: str,
        knowledge_ids: Sequence[uuid.UUID] | None,
        limit: int,
        timeout_s: float,
    ) -> EntityMatches:
        """Up to `limit` entities whose name contains `entity` (related or not), best first.

        The substring test reads every name of the base (no index serves it): Neo4j stops the
        scan after `timeout_s`, and `GraphSearchTimeoutError` says so.
        """
        query = cypher.MATCH_ENTITIES.format(label=entity_label(kb_id))
        params = {"entity": entity, "kgs": _kg_list(knowledge_ids), "probe": limit + 1}
        try:
            rows = run_statements(
                self.driver,
                self.settings,
                [(query, params)],
                write=False,
                action="graph search",
                timeout_s=timeout_s,
            )[0]
        except (Neo4jError, GraphStoreError) as exc:
            if not _timed_out(exc):
                raise
            raise GraphSearchTimeoutError(
                "the graph search ran out of time; a longer entity text or a knowledge_ids "
                "filter scans less",
                timeout_s=timeout_s,
            ) from exc
        entities = [_entity(row["entity"]) for row in rows]
        return EntityMatches(entities=entities[:limit], truncated=len(entities) > limit)

    def entity_relations(
        self,
        kb_id: uuid.UUID,
        entity_ids: Sequence[str],
        relation_types: Sequence[str] | None,
        limit: int,
    ) -> RelationMatches:
        """Up to `limit` relations touching `entity_ids` (optionally of `relation_types` only)."""
        if not entity_ids:
            return RelationMatches()
        rows = self._read(
            cypher.ENTITY_RELATIONS.format(label=entity_label(kb_id)),
            {
                "ids": list(entity_ids),
                "types": None if relation_types is None else list(relation_types),
                "probe": limit + 1,
            },
        )
        endpoints: dict[str, GraphEntity] = {}
        for row in rows[:limit]:
            for end in (_entity(row["source"]), _entity(row["target"])):
                endpoints.setdefault(end.id, end)
        return RelationMatches(
            relations=[_link(row["relation"]) for row in rows[:limit]],
            endpoints=list(endpoints.values()),
            truncated=len(rows) > limit,
        )


def _describe(exc: Exception) -> str:
    """A short reason for a refused write (a lone surrogate's repr, not the raw character)."""
    if isinstance(exc, UnicodeError):
        return f"text that cannot be encoded as UTF-8 ({type(exc).__name__})"
    return ascii(str(exc))


def _timed_out(exc: Exception) -> bool:
    """Whether Neo4j stopped the transaction at its timeout (a transient error arrives wrapped
    in `GraphStoreError`)."""
    cause = exc.__cause__ if isinstance(exc, GraphStoreError) else exc
    return isinstance(cause, Neo4jError) and cause.code in _TIMED_OUT


def _kg_list(knowledge_ids: Sequence[uuid.UUID] | None) -> list[str] | None:
    return None if knowledge_ids is None else [str(k) for k in knowledge_ids]


def _entity(row: dict[str, Any]) -> GraphEntity:
    return GraphEntity(
        id=str(row["id"]),
        name=str(row["name"]),
        kg=str(row.get("kg") or ""),
        attributes=[str(a) for a in row.get("attributes") or []],
        chunks=[str(c) for c in row.get("chunks") or []],
        resolved_id=None if row.get("resolved") is None else str(row["resolved"]),
    )


def _link(row: dict[str, Any]) -> GraphLink:
    return GraphLink(
        id=str(row["id"]),
        source=str(row["source"]),
        target=str(row["target"]),
        type=str(row["type"]),
        chunks=[str(c) for c in row.get("chunks") or []],
    )


def _word_queries(kb_id: uuid.UUID, names: Sequence[str]) -> list[dict[str, str]]:
    """Full-text queries asking for every word of each name inside the base's scope."""
    scope = base_scope(kb_id)
    queries = []
    for name in dict.fromkeys(names):
        words = name_tokens(name)
        if words:
            lucene = f"scope:{scope} AND key:({' AND '.join(words)})"
            queries.append({"name": name, "lucene": lucene})
    return queries
