"""The Celery side of the core's TaskQueue port: tasks are sent by name, ids only."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from celery import Celery

__all__ = ["CeleryTaskQueue"]


class CeleryTaskQueue:
    """Enqueue by task name, so producers (API, CLI) never import the task modules."""

    def __init__(self, app: Celery) -> None:
        self.app = app

    def process_document(self, knowledge_id: uuid.UUID, attempt: int) -> None:
        self.app.send_task("document.process", args=[str(knowledge_id), attempt])

    def delete_document(self, knowledge_id: uuid.UUID) -> None:
        self.app.send_task("document.delete", args=[str(knowledge_id)])

    def delete_knowledge_base(self, kb_id: uuid.UUID) -> None:
        self.app.send_task("document.delete_kb", args=[str(kb_id)])

    def extract_chunks(
        self, knowledge_id: uuid.UUID, attempt: int, chunk_ids: Sequence[uuid.UUID]
    ) -> None:
        for chunk_id in chunk_ids:
            self.app.send_task(
                "graph.extract_chunk", args=[str(knowledge_id), attempt, str(chunk_id)]
            )

    def close_memory_session(self, tenant_id: uuid.UUID, owner: str, session_id: uuid.UUID) -> None:
        self.app.send_task("memory.close_session", args=[str(tenant_id), owner, str(session_id)])
