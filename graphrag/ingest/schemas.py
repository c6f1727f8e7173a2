"""Public shapes of documents, their stages and their chunks."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Generic, TypeVar

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field

from graphrag.db.enums import GraphStatus, KnowledgeSource, ParseStatus

__all__ = [
    "ChunkPublic",
    "KnowledgePublic",
    "KnowledgeStages",
    "Page",
    "StageProgress",
    "TextImport",
    "UrlImport",
]

T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    items: list[T]
    total: int
    page: int
    page_size: int


class KnowledgePublic(BaseModel):
    """A document and where its processing stands."""

    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    kb_id: uuid.UUID
    source: KnowledgeSource
    file_name: str
    file_type: str
    file_size: int
    sha256: str
    source_url: str | None
    parse_status: ParseStatus
    attempt: int
    pending_subtasks_count: int
    error: str | None
    page_count: int
    chunk_count: int
    entity_count: int
    relation_count: int
    failed_chunk_count: int
    stats: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class StageProgress(BaseModel):
    status: str = "pending"
    done: int = 0
    total: int = 0
    skipped: int = 0  # items the stage left out on purpose (e.g. over a budget); see `detail`
    detail: str | None = None


class KnowledgeStages(BaseModel):
    """Per-stage progress of the document's current attempt."""

    knowledge_id: uuid.UUID
    attempt: int
    parse_status: ParseStatus
    stages: dict[str, StageProgress]


class ChunkPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    knowledge_id: uuid.UUID
    seq: int
    chunk_type: str
    parent_chunk_id: uuid.UUID | None
    content: str
    page: int | None
    start_offset: int
    end_offset: int
    enabled: bool
    graph_status: GraphStatus
    graph_error: str | None


class TextImport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=500)
    content: str = Field(min_length=1)


class UrlImport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: AnyHttpUrl
