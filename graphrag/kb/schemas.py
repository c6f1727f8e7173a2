"""What a knowledge base is, as the API and the core exchange it."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from graphrag.db.enums import KnowledgeBaseStatus
from graphrag.extraction.models import ExtractConfig
from graphrag.kb.chunking import ChunkingConfig
from graphrag.settings import Settings
from graphrag.text_input import InputText, RequestModel

__all__ = [
    "IndexingStrategy",
    "KnowledgeBaseCreate",
    "KnowledgeBasePublic",
    "KnowledgeBaseUpdate",
    "graph_on",
]

Name = Annotated[InputText, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class IndexingStrategy(RequestModel):
    model_config = ConfigDict(extra="forbid")

    vector: bool = True
    keyword: bool = True
    graph_enabled: bool = False


class KnowledgeBaseCreate(RequestModel):
    model_config = ConfigDict(extra="forbid")

    name: Name
    description: InputText = Field(default="", max_length=2000)
    chunking: ChunkingConfig | None = None
    indexing: IndexingStrategy = IndexingStrategy()
    extract_config: ExtractConfig = ExtractConfig()


class KnowledgeBaseUpdate(RequestModel):
    """Fields to change; absent fields stay as they are."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    description: InputText | None = Field(default=None, max_length=2000)
    chunking: ChunkingConfig | None = None
    indexing: IndexingStrategy | None = None
    extract_config: ExtractConfig | None = None


class KnowledgeBasePublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    name: str
    description: str
    status: KnowledgeBaseStatus
    chunking: ChunkingConfig
    indexing: IndexingStrategy
    extract_config: ExtractConfig
    embedding_model: str
    chat_model: str
    graph_on: bool = False
    created_at: datetime
    updated_at: datetime


def graph_on(settings: Settings, indexing: IndexingStrategy, extract: ExtractConfig) -> bool:
    """The seed's two switches: the global NEO4J_ENABLE and the base's own pair of flags."""
    return settings.neo4j.enable and indexing.graph_enabled and extract.enabled
