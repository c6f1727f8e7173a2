"""Typed dependencies: route signatures say what they need."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Query, Request
from sqlalchemy.orm import Session

from api.auth import PrincipalDep, get_tenant
from api.state import AppState
from graphrag.chat.sessions import SessionAccess
from graphrag.db.engine import session_scope
from graphrag.graph.store import GraphStore
from graphrag.ingest.storage import FileStorage
from graphrag.outbox.relay_loop import RelayLoop
from graphrag.search.embeddings import Embedder
from graphrag.settings import Settings

__all__ = [
    "AppStateDep",
    "EmbedderDep",
    "GraphStoreDep",
    "PageParams",
    "PagesDep",
    "RelayDep",
    "SessionAccessDep",
    "SessionDep",
    "SettingsDep",
    "StorageDep",
    "TenantDep",
]


def get_state(request: Request) -> AppState:
    state: AppState = request.app.state.graphrag
    return state


AppStateDep = Annotated[AppState, Depends(get_state)]


def get_settings_dep(state: AppStateDep) -> Settings:
    return state.settings


def get_session(state: AppStateDep) -> Iterator[Session]:
    with session_scope(state.sessions) as session:
        yield session


def get_graph(state: AppStateDep) -> GraphStore:
    return state.graph


def get_storage(state: AppStateDep) -> FileStorage:
    return state.storage


def get_relay(state: AppStateDep) -> RelayLoop:
    return state.relay


def get_embedder(state: AppStateDep) -> Embedder:
    return state.services.embedder


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
# Scope "function": the commit happens before the response is sent, so a client that reads
# right after a 201 sees what it created.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]
GraphStoreDep = Annotated[GraphStore, Depends(get_graph)]
StorageDep = Annotated[FileStorage, Depends(get_storage)]
RelayDep = Annotated[RelayLoop, Depends(get_relay)]
EmbedderDep = Annotated[Embedder, Depends(get_embedder)]


# The tenant of the API key that called; GET/HEAD need `read`, other methods `write`
# (read-only POST routes use `api.auth.ReaderTenantDep`).
TenantDep = Annotated[uuid.UUID, Depends(get_tenant)]


def get_session_access(
    tenant: TenantDep, caller: PrincipalDep, settings: SettingsDep
) -> SessionAccess:
    """The chat sessions the caller reaches: its tenant's, of the owner its key acts for."""
    return SessionAccess(tenant, caller, settings.memory.default_owner)


# Needs what `TenantDep` needs (`read` to read, `write` to change).
SessionAccessDep = Annotated[SessionAccess, Depends(get_session_access)]


class PageParams:
    """`?page=&page_size=` bounded by the settings' maximum."""

    def __init__(
        self,
        settings: SettingsDep,
        page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
        page_size: Annotated[int | None, Query(ge=1)] = None,
    ) -> None:
        self.page = page
        size = page_size or settings.api.default_page_size
        self.page_size = min(size, settings.api.max_page_size)


PagesDep = Annotated[PageParams, Depends()]
