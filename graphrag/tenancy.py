"""Tenants: every knowledge base, document, session and memory belongs to exactly one."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from graphrag.db.models import Tenant

__all__ = ["ensure_tenant", "find_tenant"]


def ensure_tenant(session: Session, name: str) -> uuid.UUID:
    """The id of the tenant called `name`, created on first use (safe under concurrency)."""
    session.execute(
        insert(Tenant)
        .values(id=uuid.uuid4(), name=name)
        .on_conflict_do_nothing(index_elements=[Tenant.name])
    )
    return session.execute(select(Tenant.id).where(Tenant.name == name)).scalar_one()


def find_tenant(session: Session, name: str) -> uuid.UUID | None:
    """The id of the tenant called `name`, or None (nothing is created)."""
    return session.execute(select(Tenant.id).where(Tenant.name == name)).scalar_one_or_none()
