"""A tenant's evaluation sets and runs, found the same way: by base, newest first, or by id."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from graphrag.db.models import EvalRun, EvalSet
from graphrag.errors import NotFoundError
from graphrag.kb.service import require_live_kb

__all__ = ["newest_rows", "owned_row"]

Row = TypeVar("Row", EvalSet, EvalRun)


def owned_row(
    session: Session,
    model: type[Row],
    tenant_id: uuid.UUID,
    kb_id: uuid.UUID,
    row_id: uuid.UUID,
) -> Row:
    """The set or run of this tenant's live base, else 404 (another tenant's is not found)."""
    require_live_kb(session, tenant_id, kb_id)
    row = session.get(model, row_id)
    if row is None or row.kb_id != kb_id or row.tenant_id != tenant_id:
        what = "evaluation set" if model is EvalSet else "evaluation run"
        raise NotFoundError(f"{what} not found", id=str(row_id))
    return row


def newest_rows(
    session: Session, model: type[Row], tenant_id: uuid.UUID, kb_id: uuid.UUID, limit: int
) -> Sequence[Row]:
    """The base's sets or runs, newest first, at most `limit`."""
    require_live_kb(session, tenant_id, kb_id)
    return session.scalars(
        select(model)
        .where(model.kb_id == kb_id, model.tenant_id == tenant_id)
        .order_by(model.created_at.desc())
        .limit(limit)
    ).all()
