"""Status values stored in PostgreSQL as checked VARCHARs (a new value is a plain migration)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["GraphStatus", "KnowledgeBaseStatus", "KnowledgeSource", "MessageRole", "ParseStatus"]


class ParseStatus(StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"
    FINALIZING = "finalizing"
    COMPLETED = "completed"
    FAILED = "failed"
    DELETING = "deleting"
    CANCELLED = "cancelled"

    @classmethod
    def working(cls) -> frozenset[ParseStatus]:
        """Statuses in which a worker still owes the document some work."""
        return frozenset({cls.PENDING, cls.PROCESSING, cls.FINALIZING})


class KnowledgeSource(StrEnum):
    FILE = "file"
    URL = "url"
    TEXT = "text"


class KnowledgeBaseStatus(StrEnum):
    ACTIVE = "active"
    DELETING = "deleting"


class GraphStatus(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"


class MessageRole(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
