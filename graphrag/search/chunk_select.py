"""The chunks a search may return, as one SELECT that each search method ranks its own way.

Which chunks are visible is decided in one place for every reader: `db.visibility`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, RowMapping, Select, select
from sqlalchemy.orm import Session

from graphrag.db.models import Chunk, Knowledge
from graphrag.db.visibility import chunk_of_current_attempt, visible_chunk_conditions
from graphrag.search.models import ScoredChunk

__all__ = ["ChunkQuery", "best_scored", "scored_chunk", "visible_chunks"]

SCORE = "score"


@dataclass(frozen=True)
class ChunkQuery:
    """What every search method is asked: which chunks (the bases, optionally some of their
    documents), the least score kept, and how many of the best."""

    kb_ids: Sequence[uuid.UUID]
    knowledge_ids: Sequence[uuid.UUID] | None
    threshold: float
    limit: int


def visible_chunks(
    score: ColumnElement[float],
    kb_ids: Sequence[uuid.UUID],
    knowledge_ids: Sequence[uuid.UUID] | None,
) -> Select[*tuple[Any, ...]]:
    """The visible chunks' public columns plus `score`, labelled `score`; callers order and cut."""
    return (
        select(
            Chunk.id.label("chunk_id"),
            Chunk.knowledge_id,
            Chunk.kb_id,
            Chunk.seq,
            Chunk.page,
            Chunk.chunk_type,
            Chunk.content,
            Knowledge.file_name,
            score.label(SCORE),
        )
        .join(Knowledge, chunk_of_current_attempt())
        .where(*visible_chunk_conditions(kb_ids, knowledge_ids))
    )


def scored_chunk(row: RowMapping, score: float) -> ScoredChunk:
    """A result row of `visible_chunks` as a model, with the method's final score."""
    return ScoredChunk(
        chunk_id=row["chunk_id"],
        knowledge_id=row["knowledge_id"],
        kb_id=row["kb_id"],
        seq=row["seq"],
        page=row["page"],
        chunk_type=row["chunk_type"],
        content=row["content"],
        file_name=row["file_name"],
        score=score,
    )


def best_scored(session: Session, scored: Select[Any], chunks: ChunkQuery) -> list[ScoredChunk]:
    """At most `chunks.limit` rows of a `visible_chunks` query scoring at least its threshold,
    best first; equal scores are ordered by chunk id so that results are reproducible."""
    matches = scored.subquery("matches")
    rows = session.execute(
        select(matches)
        .where(matches.c[SCORE] >= chunks.threshold)
        .order_by(matches.c[SCORE].desc(), matches.c.chunk_id)
        .limit(chunks.limit)
    ).mappings()
    return [scored_chunk(row, float(row[SCORE])) for row in rows]
