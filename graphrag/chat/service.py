"""One chat turn end to end, in either mode: check, prepare, answer, persist, feed the memory.

This module alone frames a turn's events (steps, references, answer deltas, done, error; the
API streams them as SSE) and stores the turn; how the answer is produced is the producer's
(`producers.KnowledgeProducer`, `agent_chat.AgentProducer`). A stream that stops early (the client
went away) still persists the partial answer, marked incomplete.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from time import perf_counter
from typing import Any

from sqlalchemy.orm import Session

from graphrag.chat import fast_path, interaction_log
from graphrag.chat.pipeline import prepare_turn
from graphrag.chat.producers import AnswerProducer, KnowledgeProducer
from graphrag.chat.schemas import (
    ChatAnswer,
    ChatEvent,
    ChatRequest,
    DeltaEvent,
    DoneEvent,
    ErrorEvent,
)
from graphrag.chat.sessions import SessionAccess
from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.db.engine import session_scope
from graphrag.db.enums import MessageRole
from graphrag.db.models import Message
from graphrag.errors import GraphragError, InvalidInputError, UnexpectedError
from graphrag.llm.messages import ChatMessage
from graphrag.search.kb_search import load_kb_scopes
from graphrag.search.models import KbScope
from graphrag.timing import elapsed_ms

__all__ = [
    "UNEXPECTED_TURN_ERROR",
    "chat_answer",
    "complete_turn",
    "persist_turn",
    "run_chat",
    "run_turn",
    "start_stateless_turn",
    "start_turn",
]

log = logging.getLogger(__name__)
# The message of an `error` event for an exception that is not ours: it names no internals.
UNEXPECTED_TURN_ERROR = "the turn failed on an unexpected error (logged on the server)"


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
    services: ChatServices, access: SessionAccess, session_id: uuid.UUID, request: ChatRequest
) -> ChatTurn:
    """Check the session, the caller's right to its owner's memory (a turn reads and feeds it:
    403 `owner_forbidden` otherwise) and the scope (tenant's own bases), before anything
    streams."""
    _check_question(services, request)
    tenant_id = access.tenant_id
    with session_scope(services.sessions) as session:
        row = access.row(session, session_id)
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


def run_turn(
    services: ChatServices, turn: ChatTurn, producer: AnswerProducer
) -> Iterator[ChatEvent]:
    """One turn in any mode: its stages, the producer's steps, `references`, the answer as
    `delta`s, then `done` (with the token usage) or, when an error stops it, `error` (the
    stable code and message of a `GraphragError`; `internal_error` for any other exception,
    whose details are only logged). The turn is persisted however the stream ends; one that
    did not complete is stored marked incomplete (see `persist_turn`)."""
    start = perf_counter()
    producer = fast_path.route(services, turn, producer)
    try:
        prepare_turn(services, turn, order=producer.stages)
        for step in producer.gather(services, turn):
            turn.steps.append(step)
            yield ChatEvent(step)
        yield ChatEvent(producer.references_event(turn))
        for delta in producer.answer(services, turn):
            turn.answer += delta
            yield ChatEvent(DeltaEvent(content=delta))
        turn.completed = True
        turn.timings_ms["total"] = round(elapsed_ms(start), 3)
        done = DoneEvent(
            answer_chars=len(turn.answer),
            timings_ms=turn.timings_ms,
            references=len(turn.references),
            usage=turn.usage.public(),
        )
        yield ChatEvent(producer.done_event(done))
    except GraphragError as exc:
        # The LLM down or refusing the request (a context overflow), the embedder or the graph
        # failing: the stream still ends with an event that names the error by its code.
        log.warning("chat turn failed: %s: %s", exc.code, exc.message)
        turn.failure = exc
        yield ChatEvent(ErrorEvent.of(exc))
    except Exception as exc:
        # Anything else (a database statement timeout, a driver's own error): a stream cut
        # short looks like a network fault to every client, so it ends the same way.
        log.exception("chat turn failed unexpectedly", exc_info=exc)
        turn.failure = UnexpectedError(UNEXPECTED_TURN_ERROR)
        yield ChatEvent(ErrorEvent.of(turn.failure))
    finally:
        _persist_quietly(services, turn, producer)


def _persist_quietly(services: ChatServices, turn: ChatTurn, producer: AnswerProducer) -> None:
    # Storing runs after the stream's last event: a failure here (the database gone) is logged,
    # and must not turn a stream that ended cleanly into a cut one.
    try:
        persist_turn(services, turn, producer.trace(turn))
    except Exception as exc:
        log.exception("chat turn not stored", exc_info=exc)


def run_chat(services: ChatServices, turn: ChatTurn) -> Iterator[ChatEvent]:
    """A knowledge-chat turn (`run_turn` with the knowledge producer)."""
    return run_turn(services, turn, KnowledgeProducer())


def complete_turn(
    services: ChatServices, turn: ChatTurn, producer: AnswerProducer | None = None
) -> None:
    """Run the turn to its end without streaming (knowledge chat by default): the turn then
    holds the answer, or the error in `turn.error`."""
    for _ in run_turn(services, turn, producer or KnowledgeProducer()):
        pass


def chat_answer(turn: ChatTurn) -> ChatAnswer:
    """A finished turn as the non-streamed answer."""
    return ChatAnswer(
        answer=turn.answer,
        completed=turn.completed,
        references=turn.references,
        entities=turn.entities,
        timings_ms=turn.timings_ms,
        usage=turn.usage.public(),
        error=turn.error,
    )


def persist_turn(services: ChatServices, turn: ChatTurn, steps: list[dict[str, Any]]) -> None:
    """The question and the answer (complete or not), then the exchange for the memory.

    `steps` is what the answer records of how it was made. A turn that did not complete (an
    error, a client gone) has both messages marked incomplete: later turns leave the pair out
    of their history, and the memory does not record it. A stateless turn keeps nothing.
    """
    if turn.session_id is None:
        return  # a stateless turn keeps nothing
    references = [r.model_dump(mode="json") for r in turn.references]
    with session_scope(services.sessions) as session:
        session.add(
            Message(
                id=uuid.uuid4(),
                session_id=turn.session_id,
                role=MessageRole.USER,
                content=turn.request.query,
                completed=turn.completed,
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
        if turn.completed:
            interaction_log.log_interaction(session, services, turn)
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
