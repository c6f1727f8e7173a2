"""Chat sessions and the knowledge chat (Server-Sent Events, or one JSON answer)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, status
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from api.auth import PrincipalDep
from api.deps import AppStateDep, PageParams, SessionDep, SettingsDep, TenantDep
from api.state import AppState
from graphrag.auth.models import Principal
from graphrag.chat import sessions
from graphrag.chat.agent_chat import run_agent_chat
from graphrag.chat.schemas import (
    ChatEvent,
    ChatEventType,
    ChatRequest,
    SessionCreate,
    SessionPublic,
    SessionUpdate,
    SessionWithMessages,
)
from graphrag.chat.service import run_chat, start_turn
from graphrag.chat.turn import ChatServices
from graphrag.ingest.schemas import Page
from graphrag.memory.chat_memory import ChatMemory

router = APIRouter(prefix="/api/v1", tags=["chat"])
Pages = Annotated[PageParams, Depends()]


def _services(state: AppState) -> ChatServices:
    memory = state.memory_context()
    return ChatServices(
        settings=state.settings,
        sessions=state.sessions,
        embedder=state.embedder,
        llm=state.llm,
        graph=state.graph,
        memory=ChatMemory(memory) if memory is not None else None,
    )


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
def list_sessions(session: SessionDep, tenant: TenantDep, pages: Pages) -> Page[SessionPublic]:
    """The tenant's sessions, most recently active first, a page at a time."""
    return sessions.list_sessions(session, tenant, page=pages.page, page_size=pages.page_size)


@router.get("/sessions/{session_id}")
def get_session(
    session_id: uuid.UUID,
    session: SessionDep,
    tenant: TenantDep,
    settings: SettingsDep,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    page_size: Annotated[int | None, Query(ge=1)] = None,
) -> SessionWithMessages:
    """The session with a page of its messages, oldest first (references and completion flag
    included); `messages_total` tells how many there are. `page_size` defaults to
    `chat.messages_page_size` and is cut to `chat.max_messages_page_size`."""
    chat = settings.chat
    size = min(page_size or chat.messages_page_size, chat.max_messages_page_size)
    return sessions.get_session(session, tenant, session_id, page=page, page_size=size)


@router.patch("/sessions/{session_id}")
def rename_session(
    session_id: uuid.UUID, body: SessionUpdate, session: SessionDep, tenant: TenantDep
) -> SessionPublic:
    return sessions.rename_session(session, tenant, session_id, body)


@router.delete("/sessions/{session_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_session(
    session_id: uuid.UUID, session: SessionDep, tenant: TenantDep, state: AppStateDep
) -> None:
    """Delete the session with its messages and what the agent memory kept of it (its recall
    log and the facts learnt from it)."""
    sessions.delete_session(session, tenant, session_id, _services(state).memory)


def _may_use_memory_of(caller: Principal, owner: str, state: AppState) -> None:
    # A turn reads and feeds the session owner's memory: the key must act for that owner.
    caller.memory_owner(owner, state.settings.memory.default_owner)


def _sse(events: Iterator[ChatEvent]) -> Iterator[str]:
    for event in events:
        yield f"event: {event.type.value}\ndata: {json.dumps(event.data, ensure_ascii=False)}\n\n"


@router.post(
    "/knowledge-chat/{session_id}",
    responses={200: {"content": {"text/event-stream": {}, "application/json": {}}}},
)
async def knowledge_chat(
    session_id: uuid.UUID,
    body: ChatRequest,
    tenant: TenantDep,
    caller: PrincipalDep,
    state: AppStateDep,
) -> Any:
    """Answer a question over the session's knowledge bases.

    With `stream` (default) the answer comes as Server-Sent Events: `references` (the numbered
    passages, with match type vector, keyword, hybrid or graph), `delta` (answer text), then
    `done` (timings) or `error`. Without it, one JSON object.
    """
    services = _services(state)
    turn = await run_in_threadpool(start_turn, services, tenant, session_id, body)
    _may_use_memory_of(caller, turn.owner, state)
    if body.stream:
        return StreamingResponse(_sse(run_chat(services, turn)), media_type="text/event-stream")
    events = await run_in_threadpool(lambda: list(run_chat(services, turn)))
    error = next((e for e in events if e.type is ChatEventType.ERROR), None)
    return {
        "answer": turn.answer,
        "completed": turn.completed,
        "references": [r.model_dump(mode="json") for r in turn.references],
        "entities": turn.entities,
        "timings_ms": turn.timings_ms,
        "error": error.data if error else None,
    }


@router.post(
    "/agent-chat/{session_id}",
    responses={200: {"content": {"text/event-stream": {}, "application/json": {}}}},
)
async def agent_chat(
    session_id: uuid.UUID,
    body: ChatRequest,
    tenant: TenantDep,
    caller: PrincipalDep,
    state: AppStateDep,
) -> Any:
    """Answer a question in agent mode: the model calls search tools, then answers.

    Tools: `knowledge_search` (vector + keyword), and `query_knowledge_graph` (entities,
    relations and their passages) only when a base in scope has its graph on. With `stream`
    (default), Server-Sent Events: `step` (think, act with the tool and its arguments, observe
    with a summary, check, reflect, force_respond, respond), `references`, `delta` (the
    answer), then `done` or `error`. Without it, one JSON object holding the same.
    """
    services = _services(state)
    turn = await run_in_threadpool(start_turn, services, tenant, session_id, body)
    _may_use_memory_of(caller, turn.owner, state)
    if body.stream:
        events = run_agent_chat(services, turn)
        return StreamingResponse(_sse(events), media_type="text/event-stream")
    collected = await run_in_threadpool(lambda: list(run_agent_chat(services, turn)))
    error = next((e for e in collected if e.type is ChatEventType.ERROR), None)
    return {
        "answer": turn.answer,
        "completed": turn.completed,
        "references": [r.model_dump(mode="json") for r in turn.references],
        "entities": turn.entities,
        "steps": [e.data for e in collected if e.type is ChatEventType.STEP],
        "timings_ms": turn.timings_ms,
        "error": error.data if error else None,
    }
