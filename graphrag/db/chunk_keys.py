"""The entity keys a chunk's graph extraction read, kept on the chunk row.

The graph ranking steps from a question's best passages to the other documents naming their
entities; reading those entities from the chunk row costs one primary-key lookup, where finding
them in Neo4j would scan every entity node of the passage's document.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from graphrag.db.models import Chunk

__all__ = ["chunk_entity_keys", "set_chunk_entity_keys"]


def set_chunk_entity_keys(
    session: Session, chunk_id: uuid.UUID, attempt: int, keys: Sequence[str]
) -> None:
    """Record the keys read in the chunk (of this attempt; a re-parse made new chunks)."""
    session.execute(
        update(Chunk)
        .where(Chunk.id == chunk_id, Chunk.attempt == attempt)
        .values(entity_keys=list(keys))
    )


def chunk_entity_keys(
    session: Session, chunk_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, list[str]]:
    """The recorded keys of these chunks (a chunk without any is left out)."""
    if not chunk_ids:
        return {}
    rows = session.execute(select(Chunk.id, Chunk.entity_keys).where(Chunk.id.in_(list(chunk_ids))))
    return {chunk_id: list(keys) for chunk_id, keys in rows if keys}
