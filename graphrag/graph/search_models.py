"""What graph searches return: the store's raw hits, and the public graph-search contract.

Nodes are identified by their Neo4j element id, never by name: the same name read in two
documents is two nodes, each with its own chunks.
"""

from __future__ import annotations

import uuid
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from graphrag.text_input import Bounded, InputText, RequestModel

__all__ = [
    "EntityMatches",
    "EntityPublic",
    "GraphEntity",
    "GraphLink",
    "GraphSearchRequest",
    "GraphSearchResponse",
    "RelationMatches",
    "RelationPublic",
    "SourceChunkPublic",
    "TruncationPublic",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GraphEntity(_Frozen):
    """An entity node as stored: `kg` is the id of the document it was read from."""

    id: str
    name: str
    kg: str
    attributes: list[str] = Field(default_factory=list)
    chunks: list[str] = Field(default_factory=list)
    resolved_id: str | None = None  # its resolved entity (entity resolution), if any


class GraphLink(_Frozen):
    """A typed, directed relation between two entity nodes (element ids)."""

    id: str
    source: str
    target: str
    type: str
    chunks: list[str] = Field(default_factory=list)


class EntityMatches(_Frozen):
    """Entities whose name contains a text, best first; `truncated` when more matched."""

    entities: list[GraphEntity] = Field(default_factory=list)
    truncated: bool = False


class RelationMatches(_Frozen):
    """Relations touching given entities, with both endpoints; `truncated` when more exist."""

    relations: list[GraphLink] = Field(default_factory=list)
    endpoints: list[GraphEntity] = Field(default_factory=list)
    truncated: bool = False


class GraphSearchRequest(RequestModel):
    """A read of one knowledge base's graph. Length and count caps come from the settings."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"entity": "Curie", "relation_types": ["works_at"], "limit": 20},
            ]
        },
    )

    entity: InputText = Field(
        min_length=1,
        description="Case-sensitive substring of the entity name (not blank).",
    )
    relation_types: (
        Annotated[list[InputText], Bounded("graph_search.max_relation_types")] | None
    ) = Field(
        default=None,
        min_length=1,
        description="Only relations of these exact types; absent = every type.",
    )
    knowledge_ids: Annotated[list[uuid.UUID], Bounded("graph_search.max_knowledge_ids")] | None = (
        Field(
            default=None,
            min_length=1,
            description="Only entities read from these documents; absent = the whole base.",
        )
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description="Most matching entities to return; absent = the settings' default.",
    )


class EntityPublic(BaseModel):
    """An entity of the answer; `matched` is false for one present only as a relation's end."""

    id: str
    name: str
    knowledge_id: str
    attributes: list[str]
    chunks: list[str]
    matched: bool
    resolved_id: str | None = Field(
        default=None,
        description="the resolved entity this node belongs to across documents (see "
        "/entities/{key}/resolution); null until resolved",
    )
    name_truncated: bool = False
    attributes_truncated: bool = False
    chunks_truncated: bool = False


class RelationPublic(BaseModel):
    """A relation of the answer, from entity `source` to entity `target` (entity ids)."""

    id: str
    source: str
    target: str
    type: str
    chunks: list[str]
    type_truncated: bool = False
    chunks_truncated: bool = False


class SourceChunkPublic(BaseModel):
    """A valid chunk that entities or relations of the answer were read from."""

    id: str
    knowledge_id: str
    page: int | None
    excerpt: str
    excerpt_truncated: bool = False


class TruncationPublic(BaseModel):
    """Which caps left something out of the answer."""

    results: bool = Field(description="More valid matching entities than the limit.")
    candidates: bool = Field(description="More matching entities than the candidate cap.")
    relations: bool = Field(description="More relations than the relation cap.")
    sources: bool = Field(description="More source chunks than the source cap.")
    fields: bool = Field(description="Some name, type, attribute list, chunk list or excerpt cut.")


class GraphSearchResponse(BaseModel):
    """Entities (with or without relations), relations and their validated source chunks."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "entities": [
                        {
                            "id": "4:0c1e...:12",
                            "name": "Marie Curie",
                            "knowledge_id": "7f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0",
                            "attributes": ["physicist"],
                            "chunks": ["1b2c3d4e-0000-4000-8000-000000000001"],
                            "matched": True,
                        }
                    ],
                    "relations": [],
                    "sources": [
                        {
                            "id": "1b2c3d4e-0000-4000-8000-000000000001",
                            "knowledge_id": "7f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0",
                            "page": 1,
                            "excerpt": "Marie Curie was a physicist...",
                        }
                    ],
                    "truncated": {
                        "results": False,
                        "candidates": False,
                        "relations": False,
                        "sources": False,
                        "fields": False,
                    },
                }
            ]
        }
    )

    entities: list[EntityPublic]
    relations: list[RelationPublic]
    sources: list[SourceChunkPublic]
    truncated: TruncationPublic
