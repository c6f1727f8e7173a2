"""Chat sessions and the knowledge chat (Server-Sent Events, or one JSON answer)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, status
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from api.deps import AppStateDep, SessionDep, TenantDep
from api.state import AppState
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
from graphrag.memory.chat_memory import ChatMemory

router = APIRouter(prefix="/api/v1", tags=["chat"])


def _services(state: AppState) -> ChatServices:
    return ChatServices(
        settings=state.settings,
        sessions=state.sessions,
        embedder=state.embedder,
        llm=state.llm,
        graph=state.graph,
        memory=ChatMemory(state.memory_context()),
    )


@router.post("/sessions", status_code=status.HTTP_201_CREATED)
def create_session(body: SessionCreate, session: SessionDep, tenant: TenantDep) -> SessionPublic:
    return sessions.create_session(session, tenant, body)


@router.get("/sessions")
def list_sessions(session: SessionDep, tenant: TenantDep) -> list[SessionPublic]:
    return sessions.list_sessions(session, tenant)


@router.get("/sessions/{session_id}")
def get_session(
    session_id: uuid.UUID, session: SessionDep, tenant: TenantDep
) -> SessionWithMessages:
    """The session with its messages (references and completion flag included)."""
    return sessions.get_session(session, tenant, session_id)


@router.patch("/sessions/{session_id}")
def rename_session(
    session_id: uuid.UUID, body: SessionUpdate, session: SessionDep, tenant: TenantDep
) -> SessionPublic:
    return sessions.rename_session(session, tenant, session_id, body)


@router.delete("/sessions/{session_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_session(session_id: uuid.UUID, session: SessionDep, tenant: TenantDep) -> None:
    sessions.delete_session(session, tenant, session_id)


def _sse(events: Iterator[ChatEvent]) -> Iterator[str]:
    for event in events:
        yield f"event: {event.type.value}\ndata: {json.dumps(event.data, ensure_ascii=False)}\n\n"


@router.post(
    "/knowledge-chat/{session_id}",
    responses={200: {"content": {"text/event-stream": {}, "application/json": {}}}},
)
async def knowledge_chat(
    session_id: uuid.UUID, body: ChatRequest, state: AppStateDep, tenant: TenantDep
) -> Any:
    """Answer a question over the session's knowledge bases.

    With `stream` (default) the answer comes as Server-Sent Events: `references` (the numbered
    passages, with match type vector, keyword, hybrid or graph), `delta` (answer text), then
    `done` (timings) or `error`. Without it, one JSON object.
    """
    services = _services(state)
    turn = await run_in_threadpool(start_turn, services, tenant, session_id, body)
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
    session_id: uuid.UUID, body: ChatRequest, state: AppStateDep, tenant: TenantDep
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
