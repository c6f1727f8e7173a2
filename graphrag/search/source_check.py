"""Which chunks named by the graph still stand as sources, checked against PostgreSQL.

The graph keeps chunk ids as plain strings; the rows may since have been disabled, replaced by a
re-parse (a newer attempt) or be on their way out with their document. Only visible chunks of
the base count, under the rule every search uses (`db.visibility`). Ids that are not UUIDs
never count.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import any_, bindparam, func, select
from sqlalchemy.dialects.postgresql import ARRAY, UUID
from sqlalchemy.orm import Session

from graphrag.db.models import Chunk, Knowledge
from graphrag.db.visibility import chunk_of_current_attempt, visible_chunk_conditions
from graphrag.graph.search_models import SourceChunkPublic

__all__ = ["SourceCheck"]


def _as_uuids(raw_ids: Iterable[str]) -> list[uuid.UUID]:
    ids: list[uuid.UUID] = []
    for raw in raw_ids:
        try:
            ids.append(uuid.UUID(raw))
        except ValueError:
            continue  # not a chunk id of ours: it simply never counts as a source
    return ids


class SourceCheck:
    """Valid chunks of one knowledge base, each id looked up at most once per request."""

    def __init__(self, session: Session, kb_id: uuid.UUID, excerpt_chars: int) -> None:
        self._session = session
        self._kb_id = kb_id
        self._excerpt_chars = excerpt_chars
        self._checked: set[str] = set()
        self.valid: dict[str, SourceChunkPublic] = {}
        self.file_names: dict[str, str] = {}  # knowledge id -> file name, of the valid chunks

    def check(self, chunk_ids: Iterable[str]) -> None:
        """Look up the ids not seen yet; the valid ones join `valid` with their excerpt."""
        new = [c for c in dict.fromkeys(chunk_ids) if c not in self._checked]
        self._checked.update(new)
        ids = _as_uuids(new)
        if not ids:
            return
        # One more character than shown tells whether the excerpt was cut.
        text = func.left(Chunk.content, self._excerpt_chars + 1)
        query = (
            select(Chunk.id, Chunk.knowledge_id, Chunk.page, text, Knowledge.file_name)
            .join(Knowledge, chunk_of_current_attempt())
            .where(
                Chunk.id == any_(bindparam("ids", ids, type_=ARRAY(UUID(as_uuid=True)))),
                *visible_chunk_conditions([self._kb_id], None),
            )
        )
        for chunk_id, knowledge_id, page, content, file_name in self._session.execute(query):
            self.file_names[str(knowledge_id)] = file_name
            self.valid[str(chunk_id)] = SourceChunkPublic(
                id=str(chunk_id),
                knowledge_id=str(knowledge_id),
                page=page,
                excerpt=content[: self._excerpt_chars],
                excerpt_truncated=len(content) > self._excerpt_chars,
            )

    def valid_ids(self, chunk_ids: Iterable[str]) -> list[str]:
        """`chunk_ids` that are valid (already checked), in their order, without repeats."""
        return [c for c in dict.fromkeys(chunk_ids) if c in self.valid]
