"""Chat sessions and their messages, per tenant."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from graphrag.chat.schemas import (
    MessagePublic,
    SessionCreate,
    SessionPublic,
    SessionUpdate,
    SessionWithMessages,
)
from graphrag.db.models import ChatSession
from graphrag.db.tenant_rows import tenant_row
from graphrag.kb.service import get_kb_row

__all__ = [
    "create_session",
    "delete_session",
    "get_session",
    "get_session_row",
    "list_sessions",
    "rename_session",
]


def get_session_row(session: Session, tenant_id: uuid.UUID, session_id: uuid.UUID) -> ChatSession:
    """A chat session of this tenant; another tenant's id is simply not found."""
    return tenant_row(
        session, ChatSession, tenant_id, session_id, what="chat session", id_key="session_id"
    )


def create_session(session: Session, tenant_id: uuid.UUID, data: SessionCreate) -> SessionPublic:
    """A new session; its knowledge bases must be the tenant's own."""
    for kb_id in data.kb_ids:
        get_kb_row(session, tenant_id, kb_id)
    row = ChatSession(
        id=uuid.uuid4(),
        tenant_id=tenant_id,
        owner=data.owner,
        title=data.title,
        kb_ids=[str(k) for k in data.kb_ids],
    )
    session.add(row)
    session.flush()
    session.refresh(row)
    return SessionPublic.model_validate(row)


def list_sessions(session: Session, tenant_id: uuid.UUID) -> list[SessionPublic]:
    rows = session.execute(
        select(ChatSession)
        .where(ChatSession.tenant_id == tenant_id)
        .order_by(ChatSession.updated_at.desc(), ChatSession.id)
    ).scalars()
    return [SessionPublic.model_validate(r) for r in rows]


def get_session(
    session: Session, tenant_id: uuid.UUID, session_id: uuid.UUID
) -> SessionWithMessages:
    row = get_session_row(session, tenant_id, session_id)
    public = SessionPublic.model_validate(row)
    messages = [MessagePublic.model_validate(m) for m in row.messages]
    return SessionWithMessages(**public.model_dump(), messages=messages)


def rename_session(
    session: Session, tenant_id: uuid.UUID, session_id: uuid.UUID, data: SessionUpdate
) -> SessionPublic:
    row = get_session_row(session, tenant_id, session_id)
    row.title = data.title
    session.flush()
    session.refresh(row)
    return SessionPublic.model_validate(row)


def delete_session(session: Session, tenant_id: uuid.UUID, session_id: uuid.UUID) -> None:
    session.delete(get_session_row(session, tenant_id, session_id))
