"""Chat sessions, messages, requests and the events a chat turn emits."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from graphrag.db.enums import MessageRole
from graphrag.search.models import GraphContribution, SearchHit

__all__ = [
    "ChatEvent",
    "ChatEventType",
    "ChatRequest",
    "MessagePublic",
    "Reference",
    "SessionCreate",
    "SessionPublic",
    "SessionUpdate",
    "SessionWithMessages",
]


class SessionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(default="", max_length=300)
    kb_ids: list[uuid.UUID] = Field(default_factory=list)
    owner: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="whose agent memory the session feeds (default: the key's owner)",
    )


class SessionUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(max_length=300)


class SessionPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    title: str
    owner: str
    kb_ids: list[uuid.UUID]
    created_at: datetime
    updated_at: datetime


class Reference(BaseModel):
    """A passage the answer may cite as [n]."""

    n: int
    chunk_id: uuid.UUID
    knowledge_id: uuid.UUID
    kb_id: uuid.UUID
    file_name: str
    page: int | None
    match_type: str
    excerpt: str
    graph: GraphContribution | None = None  # how the graph ranked this passage, when it did

    @classmethod
    def from_hit(cls, n: int, hit: SearchHit, excerpt: str) -> Reference:
        """Reference number `n` for a retrieved chunk."""
        return cls(
            n=n,
            chunk_id=hit.chunk_id,
            knowledge_id=hit.knowledge_id,
            kb_id=hit.kb_id,
            file_name=hit.file_name,
            page=hit.page,
            match_type=hit.match_type.value,
            excerpt=excerpt,
            graph=hit.graph,
        )


class MessagePublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    role: MessageRole
    content: str
    references: list[Reference]
    steps: list[dict[str, Any]]
    completed: bool
    created_at: datetime


class SessionWithMessages(SessionPublic):
    """A session with one page of its messages (oldest first): `messages_total` in all."""

    messages: list[MessagePublic]
    messages_total: int
    page: int
    page_size: int


class ChatRequest(BaseModel):
    """One question. The scope is the session's bases unless `kb_ids` narrows or replaces it."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1)
    kb_ids: list[uuid.UUID] | None = None
    knowledge_ids: list[uuid.UUID] | None = None
    use_graph: bool = True
    stream: bool = True


class ChatEventType(StrEnum):
    REFERENCES = "references"
    DELTA = "delta"
    STEP = "step"
    DONE = "done"
    ERROR = "error"


class ChatEvent(BaseModel):
    type: ChatEventType
    data: dict[str, Any]
