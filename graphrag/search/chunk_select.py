"""The chunks a search may return, as one SELECT that each search method ranks its own way.

Visible means: in one of the given bases (and documents, when given), `enabled`, and of the
current attempt of a document that is neither being deleted nor cancelled nor failed. Stale
chunks of an older attempt, a re-parse in progress and a deleted document are never returned.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, RowMapping, Select, and_, select

from graphrag.db.enums import ParseStatus
from graphrag.db.models import Chunk, Knowledge
from graphrag.search.models import ScoredChunk

__all__ = ["HIDDEN_STATUSES", "scored_chunk", "visible_chunks"]

HIDDEN_STATUSES = (ParseStatus.DELETING, ParseStatus.CANCELLED, ParseStatus.FAILED)

SCORE = "score"


def visible_chunks(
    score: ColumnElement[float],
    kb_ids: Sequence[uuid.UUID],
    knowledge_ids: Sequence[uuid.UUID] | None,
) -> Select[*tuple[Any, ...]]:
    """The visible chunks' public columns plus `score`, labelled `score`; callers order and cut."""
    conditions: list[ColumnElement[bool]] = [
        Chunk.kb_id.in_(kb_ids),
        Chunk.enabled.is_(True),
        Knowledge.parse_status.not_in(HIDDEN_STATUSES),
    ]
    if knowledge_ids is not None:
        conditions.append(Chunk.knowledge_id.in_(knowledge_ids))
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
        .join(
            Knowledge,
            and_(Knowledge.id == Chunk.knowledge_id, Knowledge.attempt == Chunk.attempt),
        )
        .where(*conditions)
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
