"""API keys of the caller's tenant: create (the key is shown once), list, revoke.

Needs the `admin` capability; an admin sees and manages only its own tenant's keys.
"""

from __future__ import annotations

import uuid

from fastapi import APIRouter, status

from api.auth import AdminDep
from api.deps import SessionDep, SettingsDep
from graphrag.auth import keys
from graphrag.auth.models import ApiKeyCreate, ApiKeyCreated, ApiKeyPublic

router = APIRouter(prefix="/api/v1/admin/api-keys", tags=["admin"])


@router.post("", status_code=status.HTTP_201_CREATED)
def create_api_key(
    body: ApiKeyCreate, session: SessionDep, settings: SettingsDep, admin: AdminDep
) -> ApiKeyCreated:
    """A new key for the caller's tenant. `key` is in this answer only: store it now."""
    return keys.create_key(
        session,
        settings.auth,
        tenant_id=admin.tenant_id,
        name=body.name,
        capabilities=body.capabilities,
        owner=body.owner,
    )


@router.get("")
def list_api_keys(session: SessionDep, admin: AdminDep) -> list[ApiKeyPublic]:
    """The tenant's keys, revoked ones included; never a secret or a hash."""
    return keys.list_keys(session, admin.tenant_id)


@router.delete("/{key_id}")
def revoke_api_key(key_id: uuid.UUID, session: SessionDep, admin: AdminDep) -> ApiKeyPublic:
    """Revoke a key of the tenant at once (404 for another tenant's key)."""
    return keys.revoke_key(session, admin.tenant_id, key_id)
