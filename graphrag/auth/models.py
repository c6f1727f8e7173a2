"""API keys as the rest of the system sees them: capabilities, the caller, public views."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from graphrag.errors import ForbiddenError, OwnerForbiddenError
from graphrag.text_input import InputText, RequestModel, encodable
from graphrag.value_model import ValueModel

__all__ = ["ApiKeyCreate", "ApiKeyCreated", "ApiKeyPublic", "Capability", "Principal"]


class Capability(StrEnum):
    """What a key may do. `admin` implies every other capability (within its tenant)."""

    READ = "read"  # list, read and search knowledge bases, documents, graph, chat history
    WRITE = "write"  # create, change and delete them; ask the chat
    MANAGE_MODELS = "manage_models"  # extraction previews and model setup
    ADMIN = "admin"  # manage the tenant's API keys

    @classmethod
    def known(cls, stored: Iterable[str]) -> list[Capability]:
        """The stored capabilities this version knows; any other one grants and shows nothing."""
        names = {c.value for c in cls}
        return [cls(value) for value in stored if value in names]


class Principal(ValueModel):
    """The authenticated caller: its tenant and what it may do."""

    tenant_id: uuid.UUID
    key_id: uuid.UUID | None = None  # None: auth is off and the caller is the default tenant
    capabilities: frozenset[Capability]
    owner: str | None = None  # the memory owner the key is bound to (None: the default owner)

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

    def memory_owner(self, requested: str | None, default_owner: str) -> str:
        """The memory owner this caller acts for when it asks for `requested` (None: its own).

        A key acts for the owner it was bound to at creation (the default owner when unbound);
        an `admin` key may act for any owner of its tenant. Asking for another owner without
        `admin` is `OwnerForbiddenError` (403 `owner_forbidden`).
        """
        bound = self.owner or default_owner
        if requested is None:
            return bound
        name = requested.strip()  # as the owner is stored and compared
        if self.can(Capability.ADMIN) or name == bound:
            return name
        raise OwnerForbiddenError(
            "this API key acts for one memory owner only", owner=requested, key_owner=bound
        )


def _printable(value: str) -> str:
    # Control characters (NUL above all, which PostgreSQL text refuses) and lone surrogates
    # have no place in a label or an owner name.
    text = value.strip()
    if not text or not text.isprintable() or not encodable(text):
        raise ValueError("must be printable text")
    return text


class ApiKeyCreate(RequestModel):
    """A request for a new key of the caller's tenant."""

    model_config = ConfigDict(extra="forbid")

    name: InputText = Field(min_length=1, max_length=200, description="a label for people")
    capabilities: list[Capability] = Field(min_length=1, max_length=len(Capability))
    owner: InputText | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="the one memory owner the key acts for (default: the default owner); "
        "an `admin` key may act for any",
    )

    @field_validator("name")
    @classmethod
    def _printable_name(cls, value: str) -> str:
        return _printable(value)

    @field_validator("owner")
    @classmethod
    def _printable_owner(cls, value: str | None) -> str | None:
        return None if value is None else _printable(value)


class ApiKeyPublic(BaseModel):
    """A key as listed (read from its row): never its secret nor its hash."""

    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    tenant_id: uuid.UUID
    name: str
    prefix: str = Field(description="the visible start of the key, to tell keys apart")
    capabilities: list[Capability]
    owner: str | None = Field(description="the memory owner the key acts for (None: default)")
    created_at: datetime
    revoked_at: datetime | None

    @field_validator("capabilities", mode="before")
    @classmethod
    def _known_only(cls, stored: Iterable[str]) -> list[Capability]:
        return Capability.known(stored)


class ApiKeyCreated(ApiKeyPublic):
    """A key just made: `key` is shown here once and never again."""

    key: str
