"""The port through which the core asks for background work. Workers provide the Celery side."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Protocol

__all__ = ["TaskQueue"]


class TaskQueue(Protocol):
    """Background work, enqueued by id only, always after the caller's transaction commits."""

    def process_document(self, knowledge_id: uuid.UUID, attempt: int) -> None: ...

    def delete_document(self, knowledge_id: uuid.UUID) -> None: ...

    def delete_knowledge_base(self, kb_id: uuid.UUID) -> None: ...

    def extract_chunks(
        self, knowledge_id: uuid.UUID, attempt: int, chunk_ids: Sequence[uuid.UUID]
    ) -> None: ...

    def close_memory_session(self, tenant_id: uuid.UUID, owner: str, session_id: uuid.UUID) -> None:
        """Move what a chat session taught into the owner's archival memory."""
        ...
