"""Request and answer bodies of the memory API."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict, Field

from graphrag.memory.records import FactKind
from graphrag.text_input import InputText, RequestModel

__all__ = [
    "CoreSectionWrite",
    "FactCreate",
    "FactSearch",
    "SessionCloseQueued",
    "SessionCloseRequest",
]


class _Body(RequestModel):
    model_config = ConfigDict(extra="forbid")

    owner: InputText | None = Field(
        default=None, description="whose memory; the default owner if unset"
    )


class FactCreate(_Body):
    """A fact added by hand; importance defaults to the kind's configured one."""

    text: InputText = Field(min_length=1)
    kind: FactKind = FactKind.NOTE
    importance: float | None = Field(default=None, ge=0.0, le=1.0)


class FactSearch(_Body):
    """A read-only search of the archival memory."""

    query: InputText = Field(min_length=1)
    k: int | None = Field(default=None, ge=1)


class CoreSectionWrite(_Body):
    text: InputText


class SessionCloseRequest(_Body):
    pass


class SessionCloseQueued(BaseModel):
    session_id: uuid.UUID
    owner: str
    queued: bool = True
