"""Who the caller is: its tenant and what its key may do (the web console adapts its pages)."""

from __future__ import annotations

import uuid

from fastapi import APIRouter
from pydantic import BaseModel

from api.auth import CallerDep
from graphrag.auth.models import Capability

router = APIRouter(prefix="/api/v1", tags=["identity"])


class CallerPublic(BaseModel):
    """The caller's tenant, key (None when authentication is off) and effective capabilities."""

    tenant_id: uuid.UUID
    key_id: uuid.UUID | None
    capabilities: list[Capability]


@router.get("/me")
def read_caller(caller: CallerDep) -> CallerPublic:
    """The caller's identity; `admin` is expanded into every capability it implies."""
    return CallerPublic(
        tenant_id=caller.tenant_id,
        key_id=caller.key_id,
        capabilities=[c for c in Capability if caller.can(c)],
    )
