"""A tenant's row by id, or 404: another tenant's id is simply not found, never forbidden."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TypeVar

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from graphrag.db.models import Base
from graphrag.errors import NotFoundError

__all__ = ["tenant_row"]

R = TypeVar("R", bound=Base)


def tenant_row(
    session: Session,
    model: type[R],
    tenant_id: uuid.UUID,
    row_id: uuid.UUID,
    *,
    what: str,
    id_key: str,
    where: Sequence[ColumnElement[bool]] = (),
    for_update: bool = False,
) -> R:
    """The `model` row with this id, owned by this tenant and matching `where` (e.g. not being
    deleted), locked when `for_update`; else `NotFoundError("<what> not found", <id_key>=id)`."""
    columns = model.__table__.c
    query = select(model).where(columns.id == row_id, columns.tenant_id == tenant_id, *where)
    if for_update:
        query = query.with_for_update()
    row = session.execute(query).scalar_one_or_none()
    if row is None:
        raise NotFoundError(f"{what} not found", **{id_key: str(row_id)})
    return row
