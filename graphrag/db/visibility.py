"""The one rule for which chunks may be shown: by search, the chat, the agent's graph tool and
graph-search's sources alike.

Visible means: in one of the given bases (and documents, when given), `enabled`, and of the
current attempt of a document that is neither being deleted nor cancelled nor failed. Stale
chunks of an older attempt, a re-parse in progress and a deleted document are never shown.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import ColumnElement, and_

from graphrag.db.enums import ParseStatus
from graphrag.db.models import Chunk, Knowledge

__all__ = ["HIDDEN_STATUSES", "chunk_of_current_attempt", "visible_chunk_conditions"]

HIDDEN_STATUSES = (ParseStatus.DELETING, ParseStatus.CANCELLED, ParseStatus.FAILED)


def chunk_of_current_attempt() -> ColumnElement[bool]:
    """The join condition of a chunk with its document, at the document's current attempt."""
    return and_(Knowledge.id == Chunk.knowledge_id, Knowledge.attempt == Chunk.attempt)


def visible_chunk_conditions(
    kb_ids: Sequence[uuid.UUID], knowledge_ids: Sequence[uuid.UUID] | None
) -> list[ColumnElement[bool]]:
    """WHERE conditions of visible chunks, for a query that joins Chunk to Knowledge with
    `chunk_of_current_attempt()`."""
    conditions: list[ColumnElement[bool]] = [
        Chunk.kb_id.in_(kb_ids),
        Knowledge.kb_id.in_(kb_ids),
        Chunk.enabled.is_(True),
        Knowledge.parse_status.not_in(HIDDEN_STATUSES),
    ]
    if knowledge_ids is not None:
        conditions.append(Chunk.knowledge_id.in_(knowledge_ids))
    return conditions
