"""Public shapes of documents, their stages and their chunks."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from graphrag.db.enums import GraphStatus, KnowledgeSource, ParseStatus, Stage, StageStatus
from graphrag.extraction.drops import DropCounts, EntityDrop, RelationDrop
from graphrag.extraction.models import ExtractConfig
from graphrag.extraction.overrides import ExtractOverride
from graphrag.text_input import InputText, InputUrl, RequestModel

__all__ = [
    "BatchItem",
    "BatchUpload",
    "ChunkPublic",
    "ChunkUpdate",
    "GraphDrops",
    "IngestionUsage",
    "ItemError",
    "KnowledgePublic",
    "KnowledgeStages",
    "KnowledgeUpdate",
    "KnowledgeUpdated",
    "StageProgress",
    "TextImport",
    "UrlImport",
]


class IngestionUsage(BaseModel):
    """What the graph stage of the current attempt cost (LLM tokens as the server reported)."""

    model_config = ConfigDict(from_attributes=True)

    llm_calls: int
    llm_prompt_tokens: int
    llm_completion_tokens: int
    llm_seconds: float
    graph_retries: int
    graph_seconds: float


class GraphDrops(BaseModel):
    """Extracted entities and relations left out of the graph (never stored), per reason."""

    dropped_entities: int = 0
    dropped_relations: int = 0
    entities: dict[EntityDrop, int] = Field(
        default_factory=dict,
        description="per reason: placeholder, no_name, name_too_long, over_cap",
    )
    relations: dict[RelationDrop, int] = Field(
        default_factory=dict,
        description="per reason: unknown_end, bad_type, self_loop, over_cap",
    )

    @classmethod
    def of(cls, counts: DropCounts) -> GraphDrops:
        """The public form of `counts`."""
        return cls(
            dropped_entities=counts.dropped_entities,
            dropped_relations=counts.dropped_relations,
            entities=counts.entities,
            relations=counts.relations,
        )


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
    graph_drops: GraphDrops
    usage: IngestionUsage
    stats: dict[str, Any]
    extract_override: ExtractOverride | None = Field(
        default=None, description="the document's own extraction settings over its base's"
    )
    effective_extract_config: ExtractConfig | None = Field(
        default=None,
        description="what its chunks are extracted with (one document's GET and PATCH only)",
    )
    created_at: datetime
    updated_at: datetime

    @model_validator(mode="before")
    @classmethod
    def _usage_from_row(cls, data: Any) -> Any:
        """A table row keeps its accounting in columns; the public shape groups them."""
        if isinstance(data, dict) or hasattr(data, "usage"):
            return data
        fields = {
            name: getattr(data, name)
            for name in cls.model_fields
            if name != "usage" and hasattr(data, name)
        }
        return {**fields, "usage": IngestionUsage.model_validate(data)}

    @field_validator("graph_drops", mode="before")
    @classmethod
    def _drops_from_row(cls, value: Any) -> Any:
        """A table row keeps its drops under flat keys (`entities.placeholder`...)."""
        if isinstance(value, dict) and not value.keys() & GraphDrops.model_fields.keys():
            return GraphDrops.of(DropCounts.from_flat(value))
        return value


class StageProgress(BaseModel):
    """One stage of the current attempt: its status and how far it got."""

    status: StageStatus = StageStatus.PENDING
    done: int = 0
    total: int = 0
    skipped: int = 0  # items the stage left out on purpose (e.g. over a budget); see `detail`
    detail: str | None = None
    # Seconds the stage took; for `graph`, the work of its chunk tasks summed (they overlap).
    seconds: float | None = None

    def stored(self) -> dict[str, object]:
        """The JSON kept under the stage's key in `knowledge.progress` (unset fields left out)."""
        return self.model_dump(mode="json", exclude_none=True)


class KnowledgeStages(BaseModel):
    """Per-stage progress of the document's current attempt."""

    knowledge_id: uuid.UUID
    attempt: int
    parse_status: ParseStatus
    stages: dict[Stage, StageProgress]
    usage: IngestionUsage


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
    entity_keys: list[str] = Field(
        default_factory=list, description="name keys of the entities its graph extraction read"
    )
    graph_trace: dict[str, Any] | None = Field(
        default=None,
        description="what its graph extraction read: counts, the first names and relations, "
        "how the answer parsed and why the model stopped (null until it settles)",
    )


class ChunkUpdate(RequestModel):
    """What a client may change on a chunk: whether search, the chat and the graph use it."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool


class ItemError(BaseModel):
    """Why one file of a batch was refused (the envelope of a single upload's error)."""

    code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class BatchItem(BaseModel):
    """One file of a batch upload: its own HTTP status, and the document or the error."""

    file_name: str
    status: int
    knowledge: KnowledgePublic | None = None
    error: ItemError | None = None


class BatchUpload(BaseModel):
    """The answer to a batch upload, one item per file in the order sent."""

    items: list[BatchItem]
    accepted: int
    refused: int


class TextImport(RequestModel):
    model_config = ConfigDict(extra="forbid")

    title: InputText = Field(min_length=1, max_length=500)
    content: InputText = Field(min_length=1)
    extract_override: ExtractOverride | None = None


class UrlImport(RequestModel):
    model_config = ConfigDict(extra="forbid")

    url: InputUrl
    extract_override: ExtractOverride | None = None


class KnowledgeUpdate(RequestModel):
    """A document's own extraction settings (null: its base's alone); `rebuild` re-processes
    the document at once (when its base builds a graph)."""

    model_config = ConfigDict(extra="forbid")

    extract_override: ExtractOverride | None
    rebuild: bool = False


class KnowledgeUpdated(BaseModel):
    """The document after the change, and whether its graph is out of date."""

    knowledge: KnowledgePublic
    graph_rebuild_offered: bool = Field(
        description="the settings changed what the graph is extracted with and no rebuild was "
        "asked: POST .../knowledge/{id}/reparse (or PATCH with rebuild) brings it up to date"
    )
    rebuild_queued: bool
