"""Chat sessions and the knowledge chat (Server-Sent Events, or one JSON answer)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, status
from fastapi.responses import StreamingResponse

from api.auth import PrincipalDep
from api.chat_gate import ChatGate, ChatTicket
from api.deps import (
    AppStateDep,
    PagesDep,
    SessionAccessDep,
    SessionDep,
    SettingsDep,
    TenantDep,
)
from api.state import AppState
from graphrag.chat import sessions
from graphrag.chat.agent_chat import AgentProducer, agent_chat_answer
from graphrag.chat.producers import AnswerProducer, KnowledgeProducer
from graphrag.chat.schemas import (
    AgentChatAnswer,
    AgentDoneEvent,
    AgentReferencesEvent,
    AgentStep,
    ChatAnswer,
    ChatEvent,
    ChatRequest,
    DeltaEvent,
    DoneEvent,
    ErrorEvent,
    EventPayload,
    ReferencesEvent,
    SessionCreate,
    SessionPublic,
    SessionUpdate,
    SessionWithMessages,
)
from graphrag.chat.service import (
    UNEXPECTED_TURN_ERROR,
    chat_answer,
    complete_turn,
    run_turn,
    start_turn,
)
from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.db.pages import Page
from graphrag.errors import UnexpectedError
from graphrag.memory.chat_memory import ChatMemory

router = APIRouter(prefix="/api/v1", tags=["chat"])
log = logging.getLogger(__name__)

_EVENT_STREAM = "text/event-stream"
_DEFS = "#/$defs/"


def _services(state: AppState) -> ChatServices:
    return state.chat_services(ChatMemory(state.memory_context()))


@router.post("/sessions", status_code=status.HTTP_201_CREATED)
def create_session(
    body: SessionCreate,
    tenant: TenantDep,
    caller: PrincipalDep,
    session: SessionDep,
    settings: SettingsDep,
) -> SessionPublic:
    """A new session; its memory owner is the key's own unless an `admin` key names another."""
    owner = caller.memory_owner(body.owner, settings.memory.default_owner)
    return sessions.create_session(session, tenant, owner, body, settings.chat)


@router.get("/sessions")
def list_sessions(
    session: SessionDep, access: SessionAccessDep, pages: PagesDep
) -> Page[SessionPublic]:
    """The sessions of the key's memory owner (an `admin` key: all of the tenant's), most
    recently active first, a page at a time."""
    return sessions.list_sessions(session, access, page=pages.page, page_size=pages.page_size)


@router.get("/sessions/{session_id}")
def get_session(
    session_id: uuid.UUID,
    session: SessionDep,
    access: SessionAccessDep,
    settings: SettingsDep,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    page_size: Annotated[int | None, Query(ge=1)] = None,
) -> SessionWithMessages:
    """The session with a page of its messages, oldest first (references and completion flag
    included); `messages_total` tells how many there are. `page_size` defaults to
    `chat.messages_page_size` and is cut to `chat.max_messages_page_size`. Another owner's
    session is 403 `owner_forbidden` (unless the key is `admin`)."""
    chat = settings.chat
    size = min(page_size or chat.messages_page_size, chat.max_messages_page_size)
    return sessions.get_session(session, access, session_id, page=page, page_size=size)


@router.patch("/sessions/{session_id}")
def rename_session(
    session_id: uuid.UUID, body: SessionUpdate, session: SessionDep, access: SessionAccessDep
) -> SessionPublic:
    """Rename a session of the key's owner (any owner's with `admin`)."""
    return sessions.rename_session(session, access, session_id, body)


@router.delete("/sessions/{session_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_session(
    session_id: uuid.UUID, session: SessionDep, access: SessionAccessDep, state: AppStateDep
) -> None:
    """Delete a session of the key's owner (any owner's with `admin`) with its messages and
    what the agent memory kept of it (its recall log and, with Neo4j, the facts learnt from
    it)."""
    sessions.delete_session(session, access, session_id, _services(state).memory)


def _frame(event: ChatEvent) -> str:
    return f"event: {event.type.value}\ndata: {event.data.model_dump_json()}\n\n"


def _sse(events: Iterator[ChatEvent]) -> Iterator[str]:
    """The events as SSE frames. The turn ends itself with `error` on any exception; should
    anything escape it still, the stream ends with an `error` event all the same, never cut."""
    try:
        for event in events:
            yield _frame(event)
    except Exception as exc:
        log.exception("chat stream failed", exc_info=exc)
        yield _frame(ChatEvent(ErrorEvent.of(UnexpectedError(UNEXPECTED_TURN_ERROR))))


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """`node` with its `#/$defs/` references replaced by the definitions (none is recursive)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS):
            return _inline(defs[ref.removeprefix(_DEFS)], defs)
        return {key: _inline(value, defs) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    return node


def _event_stream(*payloads: type[EventPayload]) -> dict[int | str, dict[str, Any]]:
    """The 200 response's `text/event-stream` content: one frame per payload model, shown as
    `{event, data}` (on the wire: `event: <name>` then `data: <JSON>`)."""
    frames = []
    for model in payloads:
        schema = model.model_json_schema()
        defs = schema.pop("$defs", {})
        name = model.event.value
        frames.append(
            {
                "title": f"{name} event",
                "type": "object",
                "properties": {"event": {"const": name}, "data": _inline(schema, defs)},
                "required": ["event", "data"],
            }
        )
    stream = {"schema": {"oneOf": frames}}
    return {200: {"content": {_EVENT_STREAM: stream}}}


@dataclass(frozen=True)
class StartedTurn:
    """A chat turn started in its session, the services it runs with, and its place at the
    chat gate (released when the answer has been sent)."""

    services: ChatServices
    turn: ChatTurn
    gate: ChatGate
    ticket: ChatTicket


async def start_chat_turn(
    session_id: uuid.UUID,
    body: ChatRequest,
    state: AppStateDep,
    access: SessionAccessDep,
) -> StartedTurn:
    """The turn of `body` in the session, for a key that may use the session owner's memory
    and has a free place at the chat gate (else 429 `chat_busy`, before any work)."""
    gate = state.chat_gate
    ticket = gate.enter(access.caller)
    try:
        services = _services(state)
        turn = await gate.run(start_turn, services, access, session_id, body)
    except BaseException:
        ticket.release()
        raise
    return StartedTurn(services, turn, gate, ticket)


StartedTurnDep = Annotated[StartedTurn, Depends(start_chat_turn)]


async def _answer(
    started: StartedTurn, producer: AnswerProducer, whole: Callable[[ChatTurn], ChatAnswer]
) -> StreamingResponse | ChatAnswer:
    """Stream the turn's events, or run it to its end and answer `whole(turn)`; either way on
    the chat gate's threads."""
    services, turn, gate = started.services, started.turn, started.gate
    if turn.request.stream:
        events = run_turn(services, turn, producer)
        return gate.stream(_sse(events), started.ticket, _EVENT_STREAM)
    try:
        await gate.run(complete_turn, services, turn, producer)
    finally:
        started.ticket.release()
    return whole(turn)


@router.post(
    "/knowledge-chat/{session_id}",
    response_model=ChatAnswer,
    responses=_event_stream(ReferencesEvent, DeltaEvent, DoneEvent, ErrorEvent),
)
async def knowledge_chat(started: StartedTurnDep) -> StreamingResponse | ChatAnswer:
    """Answer a question over the session's knowledge bases.

    With `stream` (default) the answer comes as Server-Sent Events: `references` (the numbered
    passages, with match type vector, keyword, hybrid or graph), `delta` (answer text), then
    `done` (timings and token usage) or `error`. Without it, one JSON object.
    """
    return await _answer(started, KnowledgeProducer(), chat_answer)


@router.post(
    "/agent-chat/{session_id}",
    response_model=AgentChatAnswer,
    responses=_event_stream(
        AgentStep, AgentReferencesEvent, DeltaEvent, AgentDoneEvent, ErrorEvent
    ),
)
async def agent_chat(started: StartedTurnDep) -> StreamingResponse | ChatAnswer:
    """Answer a question in agent mode: the model calls search tools, then answers.

    Tools: `knowledge_search` (vector + keyword), and `query_knowledge_graph` (entities,
    relations and their passages) only when a base in scope has its graph on. With `stream`
    (default), Server-Sent Events: `step` (think, act with the tool and its arguments, observe
    with a summary, check, reflect, force_respond, respond), `references`, `delta` (the
    answer), then `done` (with token usage) or `error`. Without it, one JSON object holding
    the same.
    """
    return await _answer(started, AgentProducer(), agent_chat_answer)
