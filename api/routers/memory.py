"""The agent memory: archival facts, core memory, the memory graph, session close."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response, status

from api.auth import PrincipalDep, ReaderTenantDep
from api.deps import (
    AppStateDep,
    PagesDep,
    RelayDep,
    SessionAccessDep,
    SessionDep,
    SettingsDep,
    TenantDep,
)
from api.dispatch import commit_and_kick
from api.state import AppState
from graphrag.auth.models import Principal
from graphrag.db.pages import Page
from graphrag.errors import ArchivalMemoryDisabledError, InvalidInputError, NotFoundError
from graphrag.memory import core_memory, facts_service
from graphrag.memory.context import ARCHIVAL_OFF, MemoryContext
from graphrag.memory.idle_sweep import request_close
from graphrag.memory.recall_log import last_close_report
from graphrag.memory.records import (
    EntityNeighbourhood,
    MemoryFact,
    MemoryOwner,
    ScoredFact,
    SessionCloseReport,
)
from graphrag.memory.schemas import (
    CoreSectionWrite,
    FactCreate,
    FactSearch,
    SessionCloseQueued,
    SessionCloseRequest,
)
from graphrag.memory.subgraph import MemorySubgraph, search_subgraph
from graphrag.text_input import InputText

router = APIRouter(prefix="/api/v1/memory", tags=["memory"])
OwnerQuery = Annotated[
    InputText | None, Query(description="whose memory; the default owner if unset")
]


@dataclass(frozen=True)
class Archive:
    """The memory with its archive, for a caller of `tenant`."""

    memory: MemoryContext
    tenant: uuid.UUID


@dataclass(frozen=True)
class OwnedArchive:
    """The archive and the owner whose facts the route reads or changes."""

    memory: MemoryContext
    owner: MemoryOwner


def _archive(state: AppState, tenant: uuid.UUID) -> Archive:
    ctx = state.memory_context()
    if not ctx.archival:
        raise ArchivalMemoryDisabledError(ARCHIVAL_OFF)
    return Archive(ctx, tenant)


def get_archive(tenant: TenantDep, state: AppStateDep) -> Archive:
    """The archive, checked in this order whatever the route's parameters: 401 without a valid
    key, 403 without the method's capability (the tenant's check), then 503
    `archival_memory_disabled` when Neo4j is off (told to callers only; the core memory
    routes and the chat's recall log do not need the archive)."""
    return _archive(state, tenant)


def get_reading_archive(tenant: ReaderTenantDep, state: AppStateDep) -> Archive:
    """`get_archive` for a read-only POST: `read` is the capability it needs."""
    return _archive(state, tenant)


ArchiveDep = Annotated[Archive, Depends(get_archive)]
ReadingArchiveDep = Annotated[Archive, Depends(get_reading_archive)]


def _owner(
    tenant: uuid.UUID, caller: Principal, owner: str | None, settings: SettingsDep
) -> MemoryOwner:
    # The key decides whose memory this is: its own owner, or any one with `admin` (403 else).
    name = caller.memory_owner(owner, settings.memory.default_owner)
    return facts_service.make_owner(tenant, name, settings.memory)


def get_owner(
    tenant: TenantDep, caller: PrincipalDep, settings: SettingsDep, owner: OwnerQuery = None
) -> MemoryOwner:
    """The memory `?owner=` names, as far as the caller's key may reach it."""
    return _owner(tenant, caller, owner, settings)


OwnerDep = Annotated[MemoryOwner, Depends(get_owner)]


def get_owned_archive(
    archive: ArchiveDep, caller: PrincipalDep, settings: SettingsDep, owner: OwnerQuery = None
) -> OwnedArchive:
    """`get_archive`'s checks, then the owner `?owner=` names: 403 `owner_forbidden` beyond
    the key's reach."""
    return OwnedArchive(archive.memory, _owner(archive.tenant, caller, owner, settings))


OwnedArchiveDep = Annotated[OwnedArchive, Depends(get_owned_archive)]

# Parameters in this order: the caller's key and capability are checked (401, 403) before the
# memory is asked for (503 when Neo4j is off), and the owner last (403 `owner_forbidden`).


@router.get("/facts")
def list_facts(owned: OwnedArchiveDep, pages: PagesDep) -> Page[MemoryFact]:
    """The owner's archival facts, newest first."""
    return facts_service.list_facts(owned.memory, owned.owner, pages.page, pages.page_size)


@router.post("/facts", status_code=status.HTTP_201_CREATED)
def add_fact(
    body: FactCreate, archive: ArchiveDep, caller: PrincipalDep, settings: SettingsDep
) -> MemoryFact:
    """Store a fact; 409 with `duplicate_of` when a near-duplicate is already stored."""
    who = _owner(archive.tenant, caller, body.owner, settings)
    return facts_service.add_fact(archive.memory, who, body.text, body.kind, body.importance)


@router.post("/facts/search")
def search_facts(
    body: FactSearch, archive: ReadingArchiveDep, caller: PrincipalDep, settings: SettingsDep
) -> list[ScoredFact]:
    """The best facts for a query by composite score; read-only (access counts do not move)."""
    who = _owner(archive.tenant, caller, body.owner, settings)
    return facts_service.search(archive.memory, who, body.query, body.k)


@router.get("/facts/{fact_id}")
def get_fact(fact_id: uuid.UUID, owned: OwnedArchiveDep) -> MemoryFact:
    return facts_service.get_fact(owned.memory, owned.owner, fact_id)


@router.delete("/facts/{fact_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_fact(fact_id: uuid.UUID, owned: OwnedArchiveDep) -> Response:
    facts_service.delete_fact(owned.memory, owned.owner, fact_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/entities/{name}")
def entity_neighbourhood(name: InputText, owned: OwnedArchiveDep) -> EntityNeighbourhood:
    """An entity of the memory graph: its relations, the facts naming it, its KB twins."""
    return facts_service.entity_neighbourhood(owned.memory, owned.owner, name)


@router.get("/search")
def search_memory_graph(
    q: Annotated[InputText, Query(description="words of an entity's name or description")],
    owned: OwnedArchiveDep,
    settings: SettingsDep,
    hops: Annotated[int | None, Query(ge=1, description="RELATES hops walked")] = None,
) -> MemorySubgraph:
    """The owner's memory entities matching `q` (name/description words, nearest facts), the
    entities within `hops` hops of them, their relations and the facts naming them."""
    limits = settings.memory
    if not q.strip() or len(q) > limits.max_query_chars:
        raise InvalidInputError(f"q is 1 to {limits.max_query_chars} characters")
    if hops is not None and hops > limits.subgraph_max_hops:
        raise InvalidInputError(f"hops is 1 to {limits.subgraph_max_hops}", hops=hops)
    return search_subgraph(owned.memory, owned.owner, q, hops)


@router.get("/core")
def read_core(
    session: SessionDep, settings: SettingsDep, who: OwnerDep
) -> core_memory.CoreMemoryView:
    return core_memory.read_core(session, who, settings.memory)


@router.put("/core/{section}")
def write_core_section(
    section: InputText,
    body: CoreSectionWrite,
    tenant: TenantDep,
    caller: PrincipalDep,
    session: SessionDep,
    settings: SettingsDep,
) -> core_memory.CoreSection:
    who = _owner(tenant, caller, body.owner, settings)
    return core_memory.write_section(session, who, section, body.text, settings.memory)


@router.delete("/core/{section}", status_code=status.HTTP_204_NO_CONTENT)
def delete_core_section(section: InputText, session: SessionDep, who: OwnerDep) -> Response:
    core_memory.delete_section(session, who, section)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/sessions/{session_id}/close", status_code=status.HTTP_202_ACCEPTED)
def close_session(
    session_id: uuid.UUID,
    body: SessionCloseRequest,
    access: SessionAccessDep,
    session: SessionDep,
    settings: SettingsDep,
    relay: RelayDep,
) -> SessionCloseQueued:
    """Queue the close of a session: its log becomes facts in its owner's archival memory.

    The key must act for the session's owner (any owner with `admin`; else 403
    `owner_forbidden`); an `owner` in the body must name it. 503 `archival_memory_disabled`
    without Neo4j: there is nowhere to put the facts.
    """
    row = access.row(session, session_id)  # 404 another tenant's, 403 another owner's
    who = facts_service.make_owner(access.tenant_id, row.owner, settings.memory)
    if body.owner is not None:
        named = _owner(access.tenant_id, access.caller, body.owner, settings)
        if named.owner != who.owner:
            raise InvalidInputError(
                "the session belongs to another owner", owner=named.owner, session_owner=who.owner
            )
    if not settings.neo4j.enable:
        raise ArchivalMemoryDisabledError(ARCHIVAL_OFF)
    request_close(session, who, session_id)
    commit_and_kick(session, relay)
    return SessionCloseQueued(session_id=session_id, owner=who.owner)


@router.get("/sessions/{session_id}/close-report")
def close_report(session_id: uuid.UUID, session: SessionDep, who: OwnerDep) -> SessionCloseReport:
    """The report of the session's last close (facts stored, duplicates, LLM status...)."""
    report = last_close_report(session, who, session_id)
    if report is None:
        raise NotFoundError("this session was never closed", session_id=str(session_id))
    return report
