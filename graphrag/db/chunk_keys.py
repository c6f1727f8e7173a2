"""The entity keys a chunk's graph extraction read, kept on the chunk row.

The graph ranking steps from a question's best passages to the other documents naming their
entities; reading those entities from the chunk row costs one primary-key lookup, where finding
them in Neo4j would scan every entity node of the passage's document. The chunk's settlement
writes them (`db.lifecycle.finish_chunk_subtask`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from graphrag.db.models import Chunk

__all__ = ["chunk_entity_keys"]


def chunk_entity_keys(
    session: Session, chunk_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, list[str]]:
    """The recorded keys of these chunks (a chunk without any is left out)."""
    if not chunk_ids:
        return {}
    rows = session.execute(select(Chunk.id, Chunk.entity_keys).where(Chunk.id.in_(list(chunk_ids))))
    return {chunk_id: list(keys) for chunk_id, keys in rows if keys}
