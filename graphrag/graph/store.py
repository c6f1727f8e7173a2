"""The graph store port and its disabled stand-in (NEO4J_ENABLE is not "true")."""

from __future__ import annotations

import logging
import uuid
from typing import NamedTuple, Protocol

from graphrag.extraction.models import GraphData

__all__ = ["DisabledGraphStore", "GraphCounts", "GraphStore"]

log = logging.getLogger(__name__)


class GraphCounts(NamedTuple):
    nodes: int
    relations: int


class GraphStore(Protocol):
    """Where extracted entities and relations live, namespaced per knowledge base and document."""

    enabled: bool

    def ensure_kb_indexes(self, kb_id: uuid.UUID) -> None: ...

    def write_chunk_graph(
        self, kb_id: uuid.UUID, knowledge_id: uuid.UUID, chunk_id: uuid.UUID, graph: GraphData
    ) -> GraphCounts: ...

    def document_counts(self, knowledge_id: uuid.UUID) -> GraphCounts: ...

    def delete_document(self, kb_id: uuid.UUID, knowledge_id: uuid.UUID) -> int: ...

    def delete_knowledge_base(self, kb_id: uuid.UUID) -> int: ...


class DisabledGraphStore:
    """Every call is a no-op; the first one says so in the log, once."""

    enabled = False

    def __init__(self) -> None:
        self._warned = False

    def _note(self) -> None:
        if not self._warned:
            log.warning("knowledge graph not enabled: graph build, delete and search are skipped")
            self._warned = True

    def ensure_kb_indexes(self, kb_id: uuid.UUID) -> None:
        self._note()

    def write_chunk_graph(
        self, kb_id: uuid.UUID, knowledge_id: uuid.UUID, chunk_id: uuid.UUID, graph: GraphData
    ) -> GraphCounts:
        self._note()
        return GraphCounts(0, 0)

    def document_counts(self, knowledge_id: uuid.UUID) -> GraphCounts:
        self._note()
        return GraphCounts(0, 0)

    def delete_document(self, kb_id: uuid.UUID, knowledge_id: uuid.UUID) -> int:
        self._note()
        return 0

    def delete_knowledge_base(self, kb_id: uuid.UUID) -> int:
        self._note()
        return 0
