"""One page of a listing: `?page=&page_size=` in, the rows of that page and the total out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from pydantic import BaseModel
from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

__all__ = ["Page", "page_offset", "paginate"]

T = TypeVar("T")
R = TypeVar("R")


class Page(BaseModel, Generic[T]):
    """The items of page `page` (1-based) of `page_size` items, and how many there are in all."""

    items: list[T]
    total: int
    page: int
    page_size: int


def page_offset(page: int, page_size: int) -> int:
    """How many items come before page `page` (1-based)."""
    return (page - 1) * page_size


def paginate(
    session: Session,
    query: Select[R],
    *,
    page: int,
    page_size: int,
    public: Callable[[R], T],
) -> Page[T]:
    """Page `page` of an ordered query's rows, each made public; the total counts every row."""
    counted: Select[Any] = select(func.count()).select_from(query.order_by(None).subquery())
    total = session.execute(counted).scalar_one()
    rows = session.execute(query.offset(page_offset(page, page_size)).limit(page_size)).scalars()
    return Page(items=[public(row) for row in rows], total=total, page=page, page_size=page_size)
