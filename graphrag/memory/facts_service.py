"""Archival facts as the API sees them: add (with dedup), list, read, delete, search, and an
entity's neighbourhood in the memory graph."""

from __future__ import annotations

import uuid

from graphrag.db.pages import Page, page_offset
from graphrag.errors import ConflictError, InvalidInputError, NotFoundError
from graphrag.memory.context import MemoryContext
from graphrag.memory.dedup import nearest_stored
from graphrag.memory.recall import search_facts
from graphrag.memory.records import (
    EntityNeighbourhood,
    FactKind,
    MemoryFact,
    MemoryOwner,
    NewFact,
    ScoredFact,
)
from graphrag.memory.text_checks import check_storable, has_control_chars
from graphrag.settings import MemorySettings

__all__ = [
    "add_fact",
    "default_importance",
    "delete_fact",
    "entity_neighbourhood",
    "get_fact",
    "list_facts",
    "make_owner",
    "search",
]


def make_owner(tenant_id: uuid.UUID, owner: str | None, settings: MemorySettings) -> MemoryOwner:
    """The owner named in a request (the default one when none), checked."""
    name = check_storable(owner if owner is not None else settings.default_owner, "owner").strip()
    if not name or len(name) > settings.max_owner_chars or has_control_chars(name):
        raise InvalidInputError(
            f"owner must be 1 to {settings.max_owner_chars} printable characters", owner=owner
        )
    return MemoryOwner(tenant_id=tenant_id, owner=name)


def default_importance(kind: FactKind, settings: MemorySettings) -> float:
    """The configured importance of a fact of `kind`."""
    levels = settings.importance
    by_kind = {
        FactKind.QA: levels.qa,
        FactKind.ERROR: levels.error,
        FactKind.FILES: levels.files,
        FactKind.ENTITY: levels.entity,
        FactKind.RELATION: levels.relation,
        FactKind.SUMMARY: levels.summary,
        FactKind.NOTE: levels.note,
    }
    return by_kind[kind]


def add_fact(
    ctx: MemoryContext, owner: MemoryOwner, text: str, kind: FactKind, importance: float | None
) -> MemoryFact:
    """Store one fact unless a near-duplicate exists (ConflictError naming it); link the known
    entities it names."""
    body = check_storable(text, "text").strip()
    if not body or len(body) > ctx.settings.fact_max_chars:
        raise InvalidInputError(f"a fact is 1 to {ctx.settings.fact_max_chars} characters")
    vector = ctx.embedder.embed_query(body)
    twin = nearest_stored(ctx.archive, owner, vector)
    if twin is not None and twin.similarity > ctx.settings.dedup_similarity:
        raise ConflictError(
            "a near-duplicate fact is already stored",
            duplicate_of=str(twin.fact.id),
            similarity=round(twin.similarity, 4),
        )
    weight = importance if importance is not None else default_importance(kind, ctx.settings)
    fact = NewFact(text=body, kind=kind, importance=weight)
    fact_id = uuid.uuid4()
    now = ctx.clock()
    names = ctx.entities.known_names_in(owner, body, capped=False)
    ctx.graph_io().write_all(
        [
            ctx.archive.create_statement(owner, [(fact_id, fact, vector)], now),
            ctx.entities.link_mentions(owner, [(fact_id, names)]),
        ]
    )
    stored = ctx.archive.get(owner, fact_id)
    if stored is None:  # written in the transaction above; gone only if deleted meanwhile
        raise NotFoundError("the fact was deleted while being stored", id=str(fact_id))
    return stored


def list_facts(
    ctx: MemoryContext, owner: MemoryOwner, page: int, page_size: int
) -> Page[MemoryFact]:
    skip = page_offset(page, page_size)
    items, total = ctx.archive.list_facts(owner, skip=skip, limit=page_size)
    return Page(items=items, total=total, page=page, page_size=page_size)


def get_fact(ctx: MemoryContext, owner: MemoryOwner, fact_id: uuid.UUID) -> MemoryFact:
    fact = ctx.archive.get(owner, fact_id)
    if fact is None:
        raise NotFoundError("no such memory", id=str(fact_id))
    return fact


def delete_fact(ctx: MemoryContext, owner: MemoryOwner, fact_id: uuid.UUID) -> None:
    if not ctx.archive.delete(owner, fact_id):
        raise NotFoundError("no such memory", id=str(fact_id))


def search(ctx: MemoryContext, owner: MemoryOwner, query: str, k: int | None) -> list[ScoredFact]:
    """The best facts for `query` by composite score; read-only (no access is recorded)."""
    settings = ctx.settings
    if not check_storable(query, "query").strip() or len(query) > settings.max_query_chars:
        raise InvalidInputError(f"a query is 1 to {settings.max_query_chars} characters")
    limit = k if k is not None else settings.search_default_k
    if not 1 <= limit <= settings.search_max_k:
        raise InvalidInputError(f"k must be between 1 and {settings.search_max_k}")
    return search_facts(ctx, owner, query, limit)


def entity_neighbourhood(ctx: MemoryContext, owner: MemoryOwner, name: str) -> EntityNeighbourhood:
    found = ctx.entities.neighbourhood(owner, check_storable(name, "entity name"))
    if found is None:
        raise NotFoundError("no such entity in the memory graph", name=name)
    return found
