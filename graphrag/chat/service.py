"""One chat turn end to end: prepare, stream the answer, persist, feed the memory.

The events (references, answer deltas, done, error) are what the API streams as SSE. A stream
that stops early (the client went away) still persists the partial answer, marked incomplete.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from time import perf_counter
from typing import Any

from sqlalchemy.orm import Session

from graphrag.chat.pipeline import prepare_turn
from graphrag.chat.schemas import ChatEvent, ChatEventType, ChatRequest
from graphrag.chat.sessions import get_session_row
from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.db.engine import session_scope
from graphrag.db.enums import MessageRole
from graphrag.db.models import Message
from graphrag.errors import InvalidInputError, LlmUnavailableError
from graphrag.llm.prompts import ChatMessage
from graphrag.search.kb_search import load_kb_scopes
from graphrag.search.models import KbScope

__all__ = ["persist_turn", "run_chat", "start_stateless_turn", "start_turn"]

log = logging.getLogger(__name__)
_MS_PER_S = 1000.0


def _check_question(services: ChatServices, request: ChatRequest) -> None:
    chat = services.settings.chat
    if len(request.query) > chat.max_query_chars:
        raise InvalidInputError(f"the question exceeds {chat.max_query_chars} characters")
    if len(request.knowledge_ids or []) > chat.max_knowledge_ids:
        raise InvalidInputError(
            f"knowledge_ids may list at most {chat.max_knowledge_ids} documents",
            knowledge_ids=len(request.knowledge_ids or []),
        )


def _scopes(
    session: Session, services: ChatServices, tenant_id: uuid.UUID, kb_ids: list[uuid.UUID]
) -> list[KbScope]:
    chat = services.settings.chat
    if not kb_ids:
        raise InvalidInputError("the chat has no knowledge base: give kb_ids")
    if len(kb_ids) > chat.max_kbs:
        raise InvalidInputError(f"at most {chat.max_kbs} knowledge bases per chat")
    return load_kb_scopes(session, services.settings, tenant_id, kb_ids)


def start_turn(
    services: ChatServices, tenant_id: uuid.UUID, session_id: uuid.UUID, request: ChatRequest
) -> ChatTurn:
    """Check the session and the scope (tenant's own bases), before anything streams."""
    _check_question(services, request)
    with session_scope(services.sessions) as session:
        row = get_session_row(session, tenant_id, session_id)
        kb_ids = request.kb_ids or [uuid.UUID(str(k)) for k in row.kb_ids]
        scopes = _scopes(session, services, tenant_id, kb_ids)
        owner = row.owner
    return ChatTurn(
        tenant_id=tenant_id, session_id=session_id, owner=owner, request=request, scopes=scopes
    )


def start_stateless_turn(
    services: ChatServices,
    tenant_id: uuid.UUID,
    request: ChatRequest,
    history: list[ChatMessage],
    instructions: str = "",
) -> ChatTurn:
    """A turn over `request.kb_ids` without a stored session: the caller sends the history
    (kept to the last `history_turns` messages), and nothing is persisted nor remembered."""
    _check_question(services, request)
    turns = services.settings.chat.history_turns
    with session_scope(services.sessions) as session:
        scopes = _scopes(session, services, tenant_id, list(request.kb_ids or []))
    return ChatTurn(
        tenant_id=tenant_id,
        session_id=None,
        owner="",
        request=request,
        scopes=scopes,
        history=history[-turns:] if turns else [],
        instructions=instructions,
    )


def run_chat(services: ChatServices, turn: ChatTurn) -> Iterator[ChatEvent]:
    """Prepare the turn, then stream the answer; persistence happens however the stream ends."""
    start = perf_counter()
    try:
        prepare_turn(services, turn)
        yield ChatEvent(
            type=ChatEventType.REFERENCES,
            data={
                "references": [r.model_dump(mode="json") for r in turn.references],
                "entities": turn.entities,
                "graph_truncated": turn.graph_truncated,
            },
        )
        max_tokens = services.settings.chat.answer_max_tokens
        for delta in services.llm.stream(turn.messages, max_tokens, turn.usage):
            turn.answer += delta
            yield ChatEvent(type=ChatEventType.DELTA, data={"content": delta})
        turn.completed = True
        turn.timings_ms["total"] = round((perf_counter() - start) * _MS_PER_S, 3)
        yield ChatEvent(
            type=ChatEventType.DONE,
            data={
                "answer_chars": len(turn.answer),
                "timings_ms": turn.timings_ms,
                "references": len(turn.references),
            },
        )
    except LlmUnavailableError as exc:
        yield ChatEvent(type=ChatEventType.ERROR, data={"code": exc.code, "message": exc.message})
    finally:
        persist_turn(services, turn)


def persist_turn(
    services: ChatServices, turn: ChatTurn, steps: list[dict[str, Any]] | None = None
) -> None:
    """The question and the answer (complete or not), then the exchange for the memory.

    `steps` is what the answer records of how it was made; by default the stage timings.
    A stateless turn (no session) keeps nothing.
    """
    if turn.session_id is None:
        return  # a stateless turn keeps nothing
    if steps is None:
        steps = [{"stage": k, "ms": v} for k, v in turn.timings_ms.items()]
    references = [r.model_dump(mode="json") for r in turn.references]
    with session_scope(services.sessions) as session:
        session.add(
            Message(
                id=uuid.uuid4(),
                session_id=turn.session_id,
                role=MessageRole.USER,
                content=turn.request.query,
                completed=True,
            )
        )
        session.flush()
        session.add(
            Message(
                id=uuid.uuid4(),
                session_id=turn.session_id,
                role=MessageRole.ASSISTANT,
                content=turn.answer,
                references=references,
                completed=turn.completed,
                steps=steps,
            )
        )
        if turn.completed and services.memory is not None:
            services.memory.record_exchange(
                session,
                turn.tenant_id,
                turn.owner,
                turn.session_id,
                turn.request.query,
                turn.answer,
                turn.entities,
            )
