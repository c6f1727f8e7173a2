"""Status values stored in PostgreSQL as checked VARCHARs (a new value is a plain migration)."""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "GraphStatus",
    "KnowledgeBaseStatus",
    "KnowledgeSource",
    "MessageRole",
    "OutboxLane",
    "OutboxStatus",
    "ParseStatus",
    "Stage",
    "StageStatus",
]


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


class Stage(StrEnum):
    """The steps of a document's attempt, in the order they run (keys of `knowledge.progress`)."""

    PARSE = "parse"
    EMBED = "embed"
    INDEX = "index"
    GRAPH = "graph"


class StageStatus(StrEnum):
    """Where one stage of the current attempt stands."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    SKIPPED = "skipped"  # not run on purpose (vectors off, graph off or nothing to extract)
    CANCELLED = "cancelled"  # stopped part way: the base's graph was switched off


class KnowledgeSource(StrEnum):
    FILE = "file"
    URL = "url"
    TEXT = "text"


class KnowledgeBaseStatus(StrEnum):
    ACTIVE = "active"
    DELETING = "deleting"


class EvalRunStatus(StrEnum):
    """Where an evaluation run stands; a run never leaves the last three (`ended`)."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def ended(self) -> bool:
        """Whether the run is over (succeeded, failed or cancelled)."""
        return self not in (EvalRunStatus.QUEUED, EvalRunStatus.RUNNING)


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


class OutboxStatus(StrEnum):
    """A task row's life: written with its state change, sent by the relay, deleted once settled."""

    PENDING = "pending"  # not sent yet, or due to be sent again
    SENT = "sent"  # handed to the broker; its task has not settled yet
    FAILED = "failed"  # given up after `outbox.max_resends`; kept for the operator

    @classmethod
    def live(cls) -> frozenset[OutboxStatus]:
        """Rows whose task is still owed."""
        return frozenset({cls.PENDING, cls.SENT})


class OutboxLane(StrEnum):
    """How the relay gates a row: graph rows fairly across documents, parse rows in order,
    every other task at once."""

    GRAPH = "graph"
    PARSE = "parse"
    DIRECT = "direct"
