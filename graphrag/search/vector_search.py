"""Nearest chunks by cosine similarity, through pgvector's HNSW index.

The inner query is the shape the index serves (`ORDER BY embedding <=> q LIMIT k`), with the
visibility filters applied during the scan. A filtered HNSW scan alone stops after
`hnsw.ef_search` candidates, so a small base in a large table could get nothing back; pgvector's
iterative scan (0.8+) keeps walking the graph until `k` rows pass the filters. In
`relaxed_order` mode the rows may come slightly out of order, so the outer query sorts again,
and it drops what falls under the similarity threshold (cutting after the LIMIT gives the same
rows as cutting before it, since the rows under the threshold are the farthest ones).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from graphrag.db.models import Chunk
from graphrag.search.chunk_select import SCORE, ChunkQuery, scored_chunk, visible_chunks
from graphrag.search.models import ScoredChunk
from graphrag.settings import SearchSettings

__all__ = ["vector_search"]


def _tune_hnsw(session: Session, settings: SearchSettings, limit: int) -> None:
    # Transaction-local (`is_local`): the pooled connection goes back with its defaults.
    ef_search = max(settings.hnsw_ef_search, limit)
    session.execute(
        select(
            func.set_config("hnsw.iterative_scan", settings.hnsw_iterative_scan, True),
            func.set_config("hnsw.ef_search", str(ef_search), True),
        )
    )


def vector_search(
    session: Session,
    settings: SearchSettings,
    query_vector: Sequence[float],
    chunks: ChunkQuery,
) -> list[ScoredChunk]:
    """At most `chunks.limit` visible chunks with similarity (1 - cosine distance) at least
    the threshold; best first, equal distances ordered by chunk id (reproducible results)."""
    if not chunks.kb_ids:
        return []
    _tune_hnsw(session, settings, chunks.limit)
    distance = Chunk.embedding.cosine_distance(list(query_vector))
    nearest = (
        visible_chunks(distance, chunks.kb_ids, chunks.knowledge_ids)
        .where(Chunk.embedding.is_not(None))
        .order_by(distance)
        .limit(chunks.limit)
        .subquery("nearest")
    )
    rows = session.execute(
        select(nearest)
        .where(nearest.c[SCORE] <= 1.0 - chunks.threshold)
        .order_by(nearest.c[SCORE], nearest.c.chunk_id)
    ).mappings()
    return [scored_chunk(row, 1.0 - float(row[SCORE])) for row in rows]
