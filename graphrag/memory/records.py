"""The memory's data: who owns it, the facts it keeps and how a fact scored in a recall."""

from __future__ import annotations

import uuid
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from graphrag.value_model import ValueModel

__all__ = [
    "EntityNeighbourhood",
    "EntityRelation",
    "FactKind",
    "LinkedKbEntity",
    "LlmStatus",
    "MemoryFact",
    "MemoryOwner",
    "NewFact",
    "ScoredFact",
    "SessionCloseReport",
    "SessionEntity",
    "SessionRelation",
    "SimilarFact",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MemoryOwner(_Frozen):
    """Whose memory: a tenant and an owner name inside it (a user, an agent persona)."""

    tenant_id: uuid.UUID
    owner: str = Field(min_length=1)


class FactKind(StrEnum):
    """Where a fact comes from."""

    QA = "qa"  # a question of the user and the answer given
    ERROR = "error"  # an error met in a session
    FILES = "files"  # the files a session mentioned
    ENTITY = "entity"  # what the LLM read about an entity
    RELATION = "relation"  # a relation the LLM read between two entities
    SUMMARY = "summary"  # the compacted start of a long session
    NOTE = "note"  # added by hand through the API


class NewFact(_Frozen):
    """A fact about to be stored."""

    text: str = Field(min_length=1)
    kind: FactKind
    importance: float = Field(ge=0.0, le=1.0)
    session_id: uuid.UUID | None = None


class MemoryFact(_Frozen):
    """A stored archival fact (a `:Memory` node); times are epoch milliseconds."""

    id: uuid.UUID
    text: str
    kind: FactKind
    importance: float
    created_at: int
    last_access: int
    access_count: int
    session_id: uuid.UUID | None = None


class SimilarFact(_Frozen):
    """A fact and its cosine similarity to a query vector."""

    fact: MemoryFact
    similarity: float


class ScoredFact(_Frozen):
    """A fact ranked by the composite recall score, with the parts of the score."""

    fact: MemoryFact
    similarity: float
    recency: float
    frequency: float
    score: float


class SessionEntity(_Frozen):
    """An entity named in a session, with what was read about it (may be empty)."""

    name: str = Field(min_length=1)
    description: str = ""


class SessionRelation(_Frozen):
    """A typed link read in a session between two entities, by name."""

    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    type: str = Field(min_length=1)


class EntityRelation(_Frozen):
    """One RELATES edge seen from an entity: its type, weight and the entity at the other end."""

    type: str
    weight: int
    other: str
    direction: Literal["out", "in"]


class LinkedKbEntity(_Frozen):
    """A knowledge-base entity of the same name (a SAME_AS link): its name and document."""

    name: str
    kg: str | None = None


class EntityNeighbourhood(_Frozen):
    """An entity of the memory graph with its relations, the facts naming it and its KB twins."""

    name: str
    description: str
    relations: list[EntityRelation]
    facts: list[MemoryFact]
    same_as: list[LinkedKbEntity]


class LlmStatus(StrEnum):
    """How the LLM pass of a session close went."""

    OK = "ok"
    EMPTY = "empty"
    UNPARSED = "unparsed"
    UNAVAILABLE = "unavailable"
    DISABLED = "disabled"


class SessionCloseReport(ValueModel):
    """What one close did; stored with the close in the recall log and returned."""

    tenant_id: uuid.UUID
    owner: str
    session_id: uuid.UUID
    messages: int
    candidates: int = 0
    stored: int = 0
    duplicates: int = 0
    entities: int = 0
    relations: int = 0
    mentions: int = 0
    same_as: int = 0
    llm_status: LlmStatus
    llm_detail: str = ""
    closed_at: int
