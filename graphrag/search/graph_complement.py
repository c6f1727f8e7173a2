"""Chunks reached through the knowledge graph: the entities named in a question, found with
SearchNode in each graph-enabled base, lead to the chunks they were read from."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import literal
from sqlalchemy.orm import Session

from graphrag.db.models import Chunk
from graphrag.graph.search_models import GraphSearchResult
from graphrag.graph.store import GraphStore
from graphrag.search.chunk_select import scored_chunk, visible_chunks
from graphrag.search.models import MatchType, SearchHit

__all__ = ["EntityGraphComplement", "graph_chunk_ids", "load_graph_hits"]

# Graph chunks have no similarity of their own; their order comes from the graph search.
_NO_SCORE = 0.0


def _as_uuid(raw: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(raw)
    except ValueError:
        return None


def graph_chunk_ids(result: GraphSearchResult) -> list[uuid.UUID]:
    """Chunk ids in SearchNode's order: seeds first (best first), then neighbours, then relations.

    Nodes are taken by element id, so the same name in two documents contributes both
    documents' chunks.
    """
    ordered: dict[uuid.UUID, None] = {}
    seeds = set(result.seed_ids)
    nodes = [n for n in result.nodes if n.id in seeds] + [
        n for n in result.nodes if n.id not in seeds
    ]
    for chunks in [n.chunks for n in nodes] + [r.chunks for r in result.relations]:
        for raw in chunks:
            if (chunk_id := _as_uuid(raw)) is not None:
                ordered.setdefault(chunk_id, None)
    return list(ordered)


class EntityGraphComplement:
    """The `GraphComplement` of the chat path, for the entity names of one question."""

    def __init__(
        self,
        store: GraphStore,
        entities: Sequence[str],
        max_chunks: int,
        knowledge_ids: Sequence[uuid.UUID] | None = None,
    ) -> None:
        self.store = store
        self.entities = list(entities)
        self.max_chunks = max_chunks
        self.knowledge_ids = knowledge_ids
        self.truncated = False

    def __call__(
        self,
        session: Session,
        query: str,
        kb_ids: Sequence[uuid.UUID],
        found: Sequence[SearchHit],
    ) -> list[SearchHit]:
        """Visible chunks of the question's entities that the other methods did not return."""
        if not self.entities:
            return []
        seen = {hit.chunk_id for hit in found}
        ordered: dict[uuid.UUID, None] = {}
        for kb_id in kb_ids:
            result = self.store.search_nodes(kb_id, self.entities, self.knowledge_ids)
            self.truncated = self.truncated or result.truncated
            for chunk_id in graph_chunk_ids(result):
                if chunk_id not in seen:
                    ordered.setdefault(chunk_id, None)
        hits = load_graph_hits(session, list(ordered), kb_ids, self.knowledge_ids)
        return hits[: self.max_chunks]


def load_graph_hits(
    session: Session,
    chunk_ids: Sequence[uuid.UUID],
    kb_ids: Sequence[uuid.UUID],
    knowledge_ids: Sequence[uuid.UUID] | None = None,
) -> list[SearchHit]:
    """The visible chunks among `chunk_ids`, in that order, as hits marked `graph`."""
    if not chunk_ids:
        return []
    query_rows = visible_chunks(literal(_NO_SCORE), kb_ids, knowledge_ids).where(
        Chunk.id.in_(chunk_ids)
    )
    rows = {row["chunk_id"]: row for row in session.execute(query_rows).mappings()}
    return [
        SearchHit(
            **scored_chunk(rows[chunk_id], _NO_SCORE).model_dump(),
            rank=position,
            match_type=MatchType.GRAPH,
        )
        for position, chunk_id in enumerate((c for c in chunk_ids if c in rows), start=1)
    ]
