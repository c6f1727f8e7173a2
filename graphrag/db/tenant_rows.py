"""A tenant's row by id, or 404: another tenant's id is simply not found, never forbidden."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import NamedTuple, TypeVar

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from graphrag.db.models import Base
from graphrag.errors import NotFoundError

__all__ = ["Owner", "tenant_row"]

R = TypeVar("R", bound=Base)


class Owner(NamedTuple):
    """The row that carries the tenant for a model that has none (a chunk's document), and the
    join condition from the model to it."""

    model: type[Base]
    on: ColumnElement[bool]


def tenant_row(
    session: Session,
    model: type[R],
    tenant_id: uuid.UUID,
    row_id: uuid.UUID,
    *,
    what: str,
    id_key: str,
    where: Sequence[ColumnElement[bool]] = (),
    owner: Owner | None = None,
    for_update: bool = False,
) -> R:
    """The `model` row with this id, owned by this tenant (through `owner` when the row carries
    no tenant itself) and matching `where` (e.g. not being deleted), locked when `for_update`;
    else `NotFoundError("<what> not found", <id_key>=id)`."""
    query = select(model)
    tenant_model: type[Base] = model
    if owner is not None:
        query = query.join(owner.model, owner.on)
        tenant_model = owner.model
    query = query.where(
        model.__table__.c.id == row_id, tenant_model.__table__.c.tenant_id == tenant_id, *where
    )
    if for_update:
        query = query.with_for_update(of=model)  # the row itself, not its owner
    row = session.execute(query).scalar_one_or_none()
    if row is None:
        raise NotFoundError(f"{what} not found", **{id_key: str(row_id)})
    return row
