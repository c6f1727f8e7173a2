"""Chat sessions and their messages, per tenant and memory owner.

A key reaches the sessions of the one memory owner it acts for (an `admin` key: every owner of
its tenant). Another tenant's session is not found (404); another owner's session of the same
tenant is 403 `owner_forbidden`, as chatting in it or naming that owner is.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import case, select
from sqlalchemy.orm import Session

from graphrag.auth.models import Capability, Principal
from graphrag.chat.schemas import (
    MessagePublic,
    SessionCreate,
    SessionPublic,
    SessionUpdate,
    SessionWithMessages,
)
from graphrag.chat.turn import MemoryPort
from graphrag.db.enums import MessageRole
from graphrag.db.models import ChatSession, Message
from graphrag.db.pages import Page, paginate
from graphrag.db.tenant_rows import tenant_row
from graphrag.errors import InvalidInputError
from graphrag.kb.service import get_kb_row
from graphrag.settings import ChatSettings

__all__ = [
    "SessionAccess",
    "create_session",
    "delete_session",
    "get_session",
    "get_session_row",
    "list_sessions",
    "rename_session",
]


# A turn's question and answer are written in one transaction and share its time: the question
# comes first.
_QUESTION_FIRST = case((Message.role == MessageRole.USER, 0), else_=1)


def get_session_row(session: Session, tenant_id: uuid.UUID, session_id: uuid.UUID) -> ChatSession:
    """A chat session of this tenant; another tenant's id is simply not found."""
    return tenant_row(
        session, ChatSession, tenant_id, session_id, what="chat session", id_key="session_id"
    )


@dataclass(frozen=True)
class SessionAccess:
    """A caller's reach over its tenant's chat sessions."""

    tenant_id: uuid.UUID
    caller: Principal
    default_owner: str  # the owner of a key bound to none

    @classmethod
    def bound_to(cls, tenant_id: uuid.UUID, owner: str, default_owner: str) -> SessionAccess:
        """The reach of a caller that reads and writes as `owner` alone, as a key bound to that
        owner would (the command line, benches)."""
        can = frozenset({Capability.READ, Capability.WRITE})
        return cls(
            tenant_id, Principal(tenant_id=tenant_id, capabilities=can, owner=owner), default_owner
        )

    @property
    def owner(self) -> str | None:
        """The one owner whose sessions the caller sees; None: every owner (`admin`)."""
        if self.caller.can(Capability.ADMIN):
            return None
        return self.caller.memory_owner(None, self.default_owner)

    def row(self, session: Session, session_id: uuid.UUID) -> ChatSession:
        """The session, if the caller may act for its owner (403 `owner_forbidden` if not)."""
        row = get_session_row(session, self.tenant_id, session_id)
        self.caller.memory_owner(row.owner, self.default_owner)
        return row


def create_session(
    session: Session, tenant_id: uuid.UUID, owner: str, data: SessionCreate, chat: ChatSettings
) -> SessionPublic:
    """A new session of the memory `owner` (the caller resolved it from `data.owner` and its
    key); its knowledge bases, at most `chat.max_kbs`, must be the tenant's own."""
    if len(data.kb_ids) > chat.max_kbs:
        raise InvalidInputError(
            f"a session may name at most {chat.max_kbs} knowledge bases", kb_ids=len(data.kb_ids)
        )
    for kb_id in dict.fromkeys(data.kb_ids):
        get_kb_row(session, tenant_id, kb_id)
    row = ChatSession(
        id=uuid.uuid4(),
        tenant_id=tenant_id,
        owner=owner,
        title=data.title,
        kb_ids=[str(k) for k in data.kb_ids],
    )
    session.add(row)
    session.flush()
    session.refresh(row)
    return SessionPublic.model_validate(row)


def list_sessions(
    session: Session, access: SessionAccess, *, page: int, page_size: int
) -> Page[SessionPublic]:
    """A page of the sessions the caller sees, most recently active first."""
    query = select(ChatSession).where(ChatSession.tenant_id == access.tenant_id)
    if (owner := access.owner) is not None:
        query = query.where(ChatSession.owner == owner)
    query = query.order_by(ChatSession.updated_at.desc(), ChatSession.id)
    return paginate(
        session, query, page=page, page_size=page_size, public=SessionPublic.model_validate
    )


def get_session(
    session: Session, access: SessionAccess, session_id: uuid.UUID, *, page: int, page_size: int
) -> SessionWithMessages:
    """The session with one page of its messages, oldest first, and how many it holds."""
    row = access.row(session, session_id)
    public = SessionPublic.model_validate(row)
    query = (
        select(Message)
        .where(Message.session_id == row.id)
        .order_by(Message.created_at, _QUESTION_FIRST, Message.id)
    )
    messages = paginate(
        session, query, page=page, page_size=page_size, public=MessagePublic.model_validate
    )
    return SessionWithMessages(
        **public.model_dump(),
        messages=messages.items,
        messages_total=messages.total,
        page=page,
        page_size=page_size,
    )


def rename_session(
    session: Session, access: SessionAccess, session_id: uuid.UUID, data: SessionUpdate
) -> SessionPublic:
    """Give the session another title."""
    row = access.row(session, session_id)
    row.title = data.title
    session.flush()
    session.refresh(row)
    return SessionPublic.model_validate(row)


def delete_session(
    session: Session, access: SessionAccess, session_id: uuid.UUID, memory: MemoryPort | None
) -> None:
    """Delete the session, its messages and its recall log (database cascade), and first what
    the memory learnt from it: a failure there leaves the session in place, to delete again."""
    row = access.row(session, session_id)
    if memory is not None:
        memory.forget_session(access.tenant_id, session_id)
    session.delete(row)
