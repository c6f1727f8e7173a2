"""Typed dependencies: route signatures say what they need."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from api.state import AppState
from graphrag.db.engine import session_scope
from graphrag.settings import Settings

__all__ = ["AppStateDep", "SessionDep", "SettingsDep"]


def get_state(request: Request) -> AppState:
    state: AppState = request.app.state.graphrag
    return state


def get_settings_dep(state: Annotated[AppState, Depends(get_state)]) -> Settings:
    return state.settings


def get_session(state: Annotated[AppState, Depends(get_state)]) -> Iterator[Session]:
    with session_scope(state.sessions) as session:
        yield session


AppStateDep = Annotated[AppState, Depends(get_state)]
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
SessionDep = Annotated[Session, Depends(get_session)]
