"""Create, verify, list and revoke API keys.

A key reads `grk_<prefix>_<secret>`: the prefix (hex) names the key in lists, the secret is
random URL-safe text. Only an HMAC-SHA256 of the whole key under the server's pepper is stored;
the plain key is returned once, by `create_key`. Verification hashes the presented key and looks
the hash up (a unique index), so no stored secret is ever compared character by character.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from collections.abc import Iterable

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from graphrag.auth.models import ApiKeyCreated, ApiKeyPublic, Capability, Principal
from graphrag.db.models import ApiKey
from graphrag.errors import NotFoundError, UnauthorizedError
from graphrag.settings import AuthSettings

__all__ = [
    "KEY_SCHEME",
    "create_key",
    "hash_key",
    "list_keys",
    "revoke_key",
    "verify_key",
]

KEY_SCHEME = "grk"  # the fixed start of every key: lets secret scanners recognise ours
_BAD_KEY = "invalid or revoked API key"


def hash_key(auth: AuthSettings, plain: str) -> str:
    """The stored form of `plain`: hex HMAC-SHA256 keyed by the server's pepper."""
    pepper = auth.pepper.get_secret_value().encode("utf-8")
    return hmac.new(pepper, plain.encode("utf-8"), hashlib.sha256).hexdigest()


def create_key(
    session: Session,
    auth: AuthSettings,
    *,
    tenant_id: uuid.UUID,
    name: str,
    capabilities: Iterable[Capability],
    owner: str | None = None,
) -> ApiKeyCreated:
    """A new key of `tenant_id`, bound to the memory `owner` (None: the default owner); the
    result's `key` is the only time the plain key exists."""
    prefix = secrets.token_hex(auth.key_prefix_bytes)
    plain = f"{KEY_SCHEME}_{prefix}_{secrets.token_urlsafe(auth.key_secret_bytes)}"
    caps = sorted(set(capabilities), key=list(Capability).index)
    row = ApiKey(
        tenant_id=tenant_id,
        name=name,
        key_hash=hash_key(auth, plain),
        prefix=prefix,
        capabilities=[c.value for c in caps],
        owner=owner,
    )
    session.add(row)
    session.flush()
    session.refresh(row)
    return ApiKeyCreated(**ApiKeyPublic.model_validate(row).model_dump(), key=plain)


def verify_key(session: Session, auth: AuthSettings, plain: str) -> Principal:
    """The caller a presented key stands for; `UnauthorizedError` if unknown or revoked."""
    if not plain.startswith(f"{KEY_SCHEME}_") or len(plain) > auth.max_key_chars:
        raise UnauthorizedError(_BAD_KEY)
    digest = hash_key(auth, plain)
    row = session.execute(select(ApiKey).where(ApiKey.key_hash == digest)).scalar_one_or_none()
    if row is None or row.revoked_at is not None or not hmac.compare_digest(row.key_hash, digest):
        raise UnauthorizedError(_BAD_KEY)
    return Principal(
        tenant_id=row.tenant_id,
        key_id=row.id,
        capabilities=frozenset(Capability.known(row.capabilities)),
        owner=row.owner,
    )


def list_keys(session: Session, tenant_id: uuid.UUID | None) -> list[ApiKeyPublic]:
    """Keys of `tenant_id` (every tenant's when None), oldest first, revoked ones included."""
    query = select(ApiKey).order_by(ApiKey.created_at, ApiKey.id)
    if tenant_id is not None:
        query = query.where(ApiKey.tenant_id == tenant_id)
    return [ApiKeyPublic.model_validate(row) for row in session.execute(query).scalars()]


def revoke_key(session: Session, tenant_id: uuid.UUID | None, key_id: uuid.UUID) -> ApiKeyPublic:
    """Revoke a key of `tenant_id` (any tenant's when None); revoking twice keeps the first time.

    A key of another tenant is reported as not found, like a key that does not exist.
    """
    query = update(ApiKey).where(ApiKey.id == key_id, ApiKey.revoked_at.is_(None))
    if tenant_id is not None:
        query = query.where(ApiKey.tenant_id == tenant_id)
    session.execute(query.values(revoked_at=func.now()))
    row = session.get(ApiKey, key_id, populate_existing=True)
    if row is None or (tenant_id is not None and row.tenant_id != tenant_id):
        raise NotFoundError("API key not found", id=str(key_id))
    return ApiKeyPublic.model_validate(row)
