"""API keys as the rest of the system sees them: capabilities, the caller, public views."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from graphrag.errors import ForbiddenError
from graphrag.text_input import InputText

__all__ = ["ApiKeyCreate", "ApiKeyCreated", "ApiKeyPublic", "Capability", "Principal"]


class Capability(StrEnum):
    """What a key may do. `admin` implies every other capability (within its tenant)."""

    READ = "read"  # list, read and search knowledge bases, documents, graph, chat history
    WRITE = "write"  # create, change and delete them; ask the chat
    MANAGE_MODELS = "manage_models"  # extraction previews and model setup
    ADMIN = "admin"  # manage the tenant's API keys


class Principal(BaseModel):
    """The authenticated caller: its tenant and what it may do."""

    model_config = ConfigDict(frozen=True)

    tenant_id: uuid.UUID
    key_id: uuid.UUID | None = None  # None: auth is off and the caller is the default tenant
    capabilities: frozenset[Capability]

    def can(self, capability: Capability) -> bool:
        """Whether the caller holds `capability` (directly or through `admin`)."""
        return capability in self.capabilities or Capability.ADMIN in self.capabilities

    def require(self, capability: Capability) -> uuid.UUID:
        """The caller's tenant if it holds `capability`; `ForbiddenError` (403) otherwise."""
        if not self.can(capability):
            raise ForbiddenError(
                f"this API key lacks the '{capability.value}' capability",
                required=capability.value,
            )
        return self.tenant_id


class ApiKeyCreate(BaseModel):
    """A request for a new key of the caller's tenant."""

    model_config = ConfigDict(extra="forbid")

    name: InputText = Field(min_length=1, max_length=200, description="a label for people")
    capabilities: list[Capability] = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _printable_name(cls, value: str) -> str:
        # Control characters (NUL above all, which PostgreSQL text refuses) and lone surrogates
        # have no place in a label.
        name = value.strip()
        if not name or not name.isprintable() or not _encodable(name):
            raise ValueError("must be printable text")
        return name


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class ApiKeyPublic(BaseModel):
    """A key as listed: never its secret nor its hash."""

    id: uuid.UUID
    tenant_id: uuid.UUID
    name: str
    prefix: str = Field(description="the visible start of the key, to tell keys apart")
    capabilities: list[Capability]
    created_at: datetime
    revoked_at: datetime | None


class ApiKeyCreated(ApiKeyPublic):
    """A key just made: `key` is shown here once and never again."""

    key: str
