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

from graphrag.chat.pipeline import prepare_turn
from graphrag.chat.schemas import ChatEvent, ChatEventType, ChatRequest
from graphrag.chat.sessions import get_session_row
from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.db.engine import session_scope
from graphrag.db.enums import MessageRole
from graphrag.db.models import Message
from graphrag.errors import InvalidInputError, LlmUnavailableError
from graphrag.search.kb_search import load_kb_scopes

__all__ = ["persist_turn", "run_chat", "start_turn"]

log = logging.getLogger(__name__)
_MS_PER_S = 1000.0


def start_turn(
    services: ChatServices, tenant_id: uuid.UUID, session_id: uuid.UUID, request: ChatRequest
) -> ChatTurn:
    """Check the session and the scope (tenant's own bases), before anything streams."""
    chat = services.settings.chat
    if len(request.query) > chat.max_query_chars:
        raise InvalidInputError(f"the question exceeds {chat.max_query_chars} characters")
    with session_scope(services.sessions) as session:
        row = get_session_row(session, tenant_id, session_id)
        kb_ids = request.kb_ids or [uuid.UUID(str(k)) for k in row.kb_ids]
        if not kb_ids:
            raise InvalidInputError("the chat has no knowledge base: give kb_ids")
        if len(kb_ids) > chat.max_kbs:
            raise InvalidInputError(f"at most {chat.max_kbs} knowledge bases per chat")
        scopes = load_kb_scopes(session, services.settings, tenant_id, kb_ids)
        owner = row.owner
    return ChatTurn(
        tenant_id=tenant_id, session_id=session_id, owner=owner, request=request, scopes=scopes
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
        for delta in services.llm.stream(turn.messages, services.settings.chat.answer_max_tokens):
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
    """
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
