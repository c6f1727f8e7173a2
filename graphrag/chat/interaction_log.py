"""The interaction log: finished chat turns as ChatML records, for fine-tuning a local model.

With `chat.interaction_log` on, each completed turn of a session is stored (`interactions`) as
`{"messages": [...]}` in the OpenAI chat format: the system text and the conversation the model
saw, the user's question as sent, the agent's tool calls and their results, and the answer.
Off by default: the records hold whole prompts. They go with their session; the export reads
one tenant's records by base and/or owner, newest first up to `chat.interaction_export_max`,
and yields them oldest first as JSON Lines.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.db.models import Interaction
from graphrag.errors import InvalidInputError
from graphrag.llm.messages import ChatMessage

__all__ = ["chatml_record", "export_lines", "log_interaction"]


def chatml_record(turn: ChatTurn) -> dict[str, Any]:
    """The turn as one ChatML record: the messages the model was sent (the question alone for
    a turn that needed no model), then the answer."""
    sent = turn.messages or [ChatMessage(role="user", content=turn.request.query)]
    messages = [m.wire() for m in sent]
    messages.append({"role": "assistant", "content": turn.answer})
    return {"messages": messages}


def log_interaction(session: Session, services: ChatServices, turn: ChatTurn) -> None:
    """Store the finished turn's record in the caller's transaction, when the log is on."""
    if not services.settings.chat.interaction_log or turn.session_id is None:
        return
    session.add(
        Interaction(
            id=uuid.uuid4(),
            tenant_id=turn.tenant_id,
            session_id=turn.session_id,
            owner=turn.owner,
            kb_ids=[scope.kb_id for scope in turn.scopes],
            record=chatml_record(turn),
        )
    )


def export_lines(
    session: Session,
    tenant_id: uuid.UUID,
    *,
    kb_id: uuid.UUID | None,
    owner: str | None,
    limit: int,
) -> Iterator[str]:
    """The tenant's records for the base and/or the owner, one JSON line each, oldest first
    (the newest `limit`). One of the two filters is required."""
    if kb_id is None and owner is None:
        raise InvalidInputError("give kb_id or owner (or both)")
    query = select(Interaction.record).where(Interaction.tenant_id == tenant_id)
    if kb_id is not None:
        query = query.where(Interaction.kb_ids.contains([kb_id]))
    if owner is not None:
        query = query.where(Interaction.owner == owner)
    newest = query.order_by(Interaction.created_at.desc(), Interaction.id.desc()).limit(limit)
    records = list(session.scalars(newest))
    for record in reversed(records):
        yield json.dumps(record, ensure_ascii=False) + "\n"
