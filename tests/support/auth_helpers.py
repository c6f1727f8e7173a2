"""API keys for tests: made through the core, used as bearer headers."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.keys import create_key
from graphrag.auth.models import ApiKeyCreated, Capability
from graphrag.db.engine import session_scope
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant

__all__ = ["bearer", "make_key"]


def make_key(
    sessions: sessionmaker[Session],
    settings: Settings,
    tenant: str,
    capabilities: Iterable[Capability],
    name: str = "test",
) -> ApiKeyCreated:
    """A new key of the tenant called `tenant` (created if missing)."""
    with session_scope(sessions) as session:
        return create_key(
            session,
            settings.auth,
            tenant_id=ensure_tenant(session, tenant),
            name=name,
            capabilities=capabilities,
        )


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}
