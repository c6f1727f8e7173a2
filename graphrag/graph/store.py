"""The graph store port and its disabled stand-in (NEO4J_ENABLE is not "true")."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

from graphrag.graph.models import GraphData
from graphrag.graph.neighbourhood import KeyInstance, NameMatching, NeighbourhoodLimits
from graphrag.graph.search_models import EntityMatches, RelationMatches

__all__ = ["DisabledGraphStore", "GraphCounts", "GraphStore"]

log = logging.getLogger(__name__)


class GraphCounts(NamedTuple):
    nodes: int
    relations: int


class GraphStore(Protocol):
    """Where extracted entities and relations live, namespaced per knowledge base and document."""

    enabled: bool

    def ensure_kb_indexes(self, kb_id: uuid.UUID) -> None: ...

    def close(self) -> None: ...

    def write_chunk_graph(
        self, kb_id: uuid.UUID, knowledge_id: uuid.UUID, chunk_id: uuid.UUID, graph: GraphData
    ) -> list[str]:
        """Merge what was read in one chunk into its document's graph (idempotent); the name
        keys it links to whose base node has no name vector yet."""
        ...

    def document_counts(self, knowledge_id: uuid.UUID) -> GraphCounts:
        """Entities and relations of one document, counted in the graph."""
        ...

    def delete_document(self, kb_id: uuid.UUID, knowledge_id: uuid.UUID) -> int: ...

    def delete_knowledge_base(self, kb_id: uuid.UUID) -> int: ...

    def match_entities(
        self,
        kb_id: uuid.UUID,
        entity: str,
        knowledge_ids: Sequence[uuid.UUID] | None,
        limit: int,
        timeout_s: float,
    ) -> EntityMatches:
        """Entities whose name contains `entity`, related or not, best first; the scan stops
        after `timeout_s` (`GraphSearchTimeoutError`)."""
        ...

    def set_key_vectors(self, kb_id: uuid.UUID, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store the name vectors of base nodes."""
        ...

    def entity_neighbourhood(
        self,
        kb_id: uuid.UUID,
        keys: Sequence[str],
        knowledge_ids: Sequence[uuid.UUID] | None,
        limits: NeighbourhoodLimits,
        matching: NameMatching | None = None,
    ) -> list[KeyInstance]:
        """Document nodes linked to these name keys across the base, and to the keys `matching`
        finds for the question's names (words, near vectors), with their neighbours."""
        ...

    def entity_relations(
        self,
        kb_id: uuid.UUID,
        entity_ids: Sequence[str],
        relation_types: Sequence[str] | None,
        limit: int,
    ) -> RelationMatches:
        """Relations touching the given entities, with their endpoints."""
        ...


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

    def close(self) -> None:
        """Nothing to release."""

    def write_chunk_graph(
        self, kb_id: uuid.UUID, knowledge_id: uuid.UUID, chunk_id: uuid.UUID, graph: GraphData
    ) -> list[str]:
        self._note()
        return []

    def document_counts(self, knowledge_id: uuid.UUID) -> GraphCounts:
        self._note()
        return GraphCounts(0, 0)

    def delete_document(self, kb_id: uuid.UUID, knowledge_id: uuid.UUID) -> int:
        self._note()
        return 0

    def delete_knowledge_base(self, kb_id: uuid.UUID) -> int:
        self._note()
        return 0

    def match_entities(
        self,
        kb_id: uuid.UUID,
        entity: str,
        knowledge_ids: Sequence[uuid.UUID] | None,
        limit: int,
        timeout_s: float,
    ) -> EntityMatches:
        self._note()
        return EntityMatches()

    def entity_relations(
        self,
        kb_id: uuid.UUID,
        entity_ids: Sequence[str],
        relation_types: Sequence[str] | None,
        limit: int,
    ) -> RelationMatches:
        self._note()
        return RelationMatches()

    def set_key_vectors(self, kb_id: uuid.UUID, vectors: Mapping[str, Sequence[float]]) -> None:
        self._note()

    def entity_neighbourhood(
        self,
        kb_id: uuid.UUID,
        keys: Sequence[str],
        knowledge_ids: Sequence[uuid.UUID] | None,
        limits: NeighbourhoodLimits,
        matching: NameMatching | None = None,
    ) -> list[KeyInstance]:
        self._note()
        return []
