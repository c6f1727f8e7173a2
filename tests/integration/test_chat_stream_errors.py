"""A turn stopped by an error ends its stream cleanly, over real HTTP with the scripted LLM: the
knowledge chat and the agent chat send an `error` event with the stable code, `/v1` an error
chunk then `data: [DONE]`; the failed turn is stored marked incomplete, the memory does not
record it, later turns leave it out of their history, and the API keeps answering. An error
that is not one of ours (here PostgreSQL cancelling the passage search at its statement
timeout, the chunks table held locked) ends the stream the same way, as `internal_error`."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, func, select, text
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.models import RecallMemory
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb, read_sse
from tests.support.http_server import ThreadedServer

pytestmark = pytest.mark.integration

CHAT_PATH = "/v1/chat/completions"
FAILED_QUESTION = "What does the Quillon crane lift?"
NEXT_QUESTION = "And the Marlow crane?"
ANSWER = "Forty tonnes."
REJECTED = "llm_request_rejected"  # the LLM's 4xx, here its context overflow
EMBEDDING_FAILED = "embedding_failed"
AGENT_STEP_ONE = "This is step 1 of"
ANSWER_PROMPT = {"user": {"contains": "Passages:"}}
OVERFLOW = {"context_overflow": True}
UNEXPECTED = "internal_error"
STATEMENT_TIMEOUT_MS = 1000  # the passage search waits this long for the locked table


def _agent_step_one(settings: Settings) -> dict[str, Any]:
    # Without a system role the system text leads the first user turn, the only one here.
    return {"system" if settings.llm.system_role else "user": {"contains": AGENT_STEP_ONE}}


@pytest.fixture(scope="module")
def remote_embedder(settings: Settings, auth_headers: dict[str, str]) -> Iterator[httpx.Client]:
    """An API that embeds through the scripted server, whose faults so reach the chat."""
    from api.app import create_app

    embedding = settings.embedding.model_copy(update={"backend": "openai"})
    app = create_app(settings.model_copy(update={"embedding": embedding}))
    with (
        ThreadedServer(app) as url,
        httpx.Client(base_url=url, timeout=60.0, headers=auth_headers) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def short_statements(settings: Settings, auth_headers: dict[str, str]) -> Iterator[httpx.Client]:
    """An API whose database statements are cancelled after a second."""
    from api.app import create_app

    database = settings.database.model_copy(update={"statement_timeout_ms": STATEMENT_TIMEOUT_MS})
    app = create_app(settings.model_copy(update={"database": database}))
    with (
        ThreadedServer(app) as url,
        httpx.Client(base_url=url, timeout=60.0, headers=auth_headers) as client,
    ):
        yield client


@contextmanager
def _chunks_locked(engine: Engine) -> Iterator[None]:
    """The chunks table locked against every reader (a long migration or a stuck transaction
    would): a search waits on it until its statement timeout."""
    with engine.connect() as connection:
        connection.execute(text("LOCK TABLE chunks IN ACCESS EXCLUSIVE MODE"))
        yield
        connection.rollback()


def _session(client: httpx.Client) -> str:
    kb = create_kb(client)
    made = client.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]})
    assert made.status_code == 201, made.text
    session_id: str = made.json()["id"]
    return session_id


def _ask(client: httpx.Client, mode: str, session_id: str, query: str) -> list[tuple[str, Any]]:
    return read_sse(client, f"/api/v1/{mode}/{session_id}", {"query": query})


def _recalled(session_factory: sessionmaker[Session], session_id: str) -> int:
    with session_factory() as db:
        count = db.scalar(
            select(func.count())
            .select_from(RecallMemory)
            .where(RecallMemory.session_id == uuid.UUID(session_id))
        )
    return int(count or 0)


def _prompts(llm: ScriptedLlmServer) -> str:
    return json.dumps([r.body for r in llm.requests(CHAT_PATH)])


def _ends_with_error(events: list[tuple[str, Any]], code: str) -> None:
    assert events, "the stream sent no event"
    name, data = events[-1]
    assert (name, data["code"]) == ("error", code), events
    assert data["message"]
    assert not [e for e in events if e[0] == "done"]


def _failed_turn_left_clean(
    client: httpx.Client, session_factory: sessionmaker[Session], session_id: str
) -> None:
    stored = client.get(f"/api/v1/sessions/{session_id}").json()["messages"]
    assert [(m["role"], m["content"], m["completed"]) for m in stored] == [
        ("user", FAILED_QUESTION, False),
        ("assistant", "", False),
    ]
    assert _recalled(session_factory, session_id) == 0  # the memory learnt nothing from it


def _next_turn_answers(
    client: httpx.Client,
    llm: ScriptedLlmServer,
    session_factory: sessionmaker[Session],
    mode: str,
    session_id: str,
) -> None:
    llm.set_rules([], default={"content": ANSWER})
    llm.clear_requests()
    events = _ask(client, mode, session_id, NEXT_QUESTION)
    assert events[-1][0] == "done", events
    assert FAILED_QUESTION not in _prompts(llm)  # the failed turn is not history
    stored = client.get(f"/api/v1/sessions/{session_id}").json()["messages"]
    assert [m["completed"] for m in stored] == [False, False, True, True]
    assert stored[3]["content"] == ANSWER
    assert _recalled(session_factory, session_id) == 2


def test_knowledge_chat_ends_with_the_error_of_a_context_overflow(
    http: httpx.Client,
    fresh_scripted_llm: ScriptedLlmServer,
    session_factory: sessionmaker[Session],
) -> None:
    fresh_scripted_llm.set_rules([{"match": ANSWER_PROMPT, "fault": OVERFLOW}])
    session_id = _session(http)
    events = _ask(http, "knowledge-chat", session_id, FAILED_QUESTION)
    assert [name for name, _ in events] == ["references", "error"]
    _ends_with_error(events, REJECTED)
    assert "exceeds the available context size" in events[-1][1]["message"]
    _failed_turn_left_clean(http, session_factory, session_id)
    _next_turn_answers(http, fresh_scripted_llm, session_factory, "knowledge-chat", session_id)


def test_agent_chat_ends_with_the_error_of_a_context_overflow(
    http: httpx.Client,
    settings: Settings,
    fresh_scripted_llm: ScriptedLlmServer,
    session_factory: sessionmaker[Session],
) -> None:
    fresh_scripted_llm.set_rules([{"match": _agent_step_one(settings), "fault": OVERFLOW}])
    session_id = _session(http)
    events = _ask(http, "agent-chat", session_id, FAILED_QUESTION)
    assert [name for name, _ in events] == ["error"]
    _ends_with_error(events, REJECTED)
    _failed_turn_left_clean(http, session_factory, session_id)
    _next_turn_answers(http, fresh_scripted_llm, session_factory, "agent-chat", session_id)


@pytest.mark.parametrize("mode", ["knowledge-chat", "agent-chat"])
def test_an_embedding_failure_ends_the_stream_with_its_code(
    remote_embedder: httpx.Client,
    fresh_scripted_llm: ScriptedLlmServer,
    session_factory: sessionmaker[Session],
    mode: str,
) -> None:
    embeddings = {"match": {"endpoint": "embeddings"}, "fault": {"status": 500}}
    tool_call = {"tool_calls": [{"name": "knowledge_search", "arguments": {"query": "crane"}}]}
    fresh_scripted_llm.set_rules([embeddings], default=tool_call)
    session_id = _session(remote_embedder)
    events = _ask(remote_embedder, mode, session_id, FAILED_QUESTION)
    _ends_with_error(events, EMBEDDING_FAILED)
    _failed_turn_left_clean(remote_embedder, session_factory, session_id)
    _next_turn_answers(remote_embedder, fresh_scripted_llm, session_factory, mode, session_id)


def _v1_stream(client: httpx.Client, body: dict[str, Any]) -> list[str]:
    """The `data:` payloads of a streamed completion, in order."""
    with client.stream("POST", CHAT_PATH, json={**body, "stream": True}) as response:
        assert response.status_code == 200
        return [
            line.removeprefix("data: ")
            for line in response.iter_lines()
            if line.startswith("data:")
        ]


def test_v1_stream_ends_with_an_error_chunk_then_done(
    http: httpx.Client, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    fresh_scripted_llm.set_rules([{"match": ANSWER_PROMPT, "fault": OVERFLOW}])
    kb = create_kb(http)
    body = {"model": kb["id"], "messages": [{"role": "user", "content": FAILED_QUESTION}]}
    data = _v1_stream(http, body)
    assert data[-1] == "[DONE]"
    error = json.loads(data[-2])["error"]
    assert (error["code"], error["type"]) == (REJECTED, "server_error")
    assert "exceeds the available context size" in error["message"]
    assert all("error" not in json.loads(d) for d in data[:-2])

    whole = http.post(CHAT_PATH, json=body)
    assert whole.status_code == 502 and whole.json()["error"]["code"] == REJECTED

    fresh_scripted_llm.set_rules([], default={"content": ANSWER})
    data = _v1_stream(http, body)
    chunks = [json.loads(d) for d in data[:-1]]
    assert data[-1] == "[DONE]" and chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == ANSWER


def test_v1_system_text_is_capped(http: httpx.Client, settings: Settings) -> None:
    kb = create_kb(http)
    cap = settings.faces.max_system_chars
    question = {"role": "user", "content": FAILED_QUESTION}
    over = {"role": "system", "content": "s" * (cap + 1)}
    refused = http.post(CHAT_PATH, json={"model": kb["id"], "messages": [over, question]})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert (error["code"], error["param"]) == ("invalid_input", "messages")
    assert str(cap) in error["message"]
    assert http.get("/v1/models").status_code == 200  # the API goes on answering


@pytest.mark.parametrize("mode", ["knowledge-chat", "agent-chat"])
def test_an_unexpected_error_mid_turn_ends_the_stream_with_internal_error(
    short_statements: httpx.Client,
    fresh_scripted_llm: ScriptedLlmServer,
    session_factory: sessionmaker[Session],
    engine: Engine,
    mode: str,
) -> None:
    tool_call = {"tool_calls": [{"name": "knowledge_search", "arguments": {"query": "crane"}}]}
    fresh_scripted_llm.set_rules([], default=tool_call)
    session_id = _session(short_statements)
    with _chunks_locked(engine):
        events = _ask(short_statements, mode, session_id, FAILED_QUESTION)
    _ends_with_error(events, UNEXPECTED)
    assert "statement" not in events[-1][1]["message"]  # no internals in the event
    _failed_turn_left_clean(short_statements, session_factory, session_id)
    _next_turn_answers(short_statements, fresh_scripted_llm, session_factory, mode, session_id)


def test_v1_ends_an_unexpected_error_with_its_chunk_then_done(
    short_statements: httpx.Client, fresh_scripted_llm: ScriptedLlmServer, engine: Engine
) -> None:
    fresh_scripted_llm.set_rules([], default={"content": ANSWER})
    kb = create_kb(short_statements)
    body = {"model": kb["id"], "messages": [{"role": "user", "content": FAILED_QUESTION}]}
    with _chunks_locked(engine):
        _v1_answers_internal_error(short_statements, kb["id"], body)
    data = _v1_stream(short_statements, body)  # the table free again: answered
    chunks = [json.loads(d) for d in data[:-1]]
    assert data[-1] == "[DONE]" and chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == ANSWER


def _v1_answers_internal_error(client: httpx.Client, kb_id: str, body: dict[str, Any]) -> None:
    data = _v1_stream(client, body)
    assert data[-1] == "[DONE]"
    error = json.loads(data[-2])["error"]
    assert (error["code"], error["type"]) == (UNEXPECTED, "server_error")
    assert all("error" not in json.loads(d) for d in data[:-2])

    whole = client.post(CHAT_PATH, json=body)
    assert whole.status_code == 500 and whole.json()["error"]["code"] == UNEXPECTED

    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "ask", "arguments": {"kb": kb_id, "question": FAILED_QUESTION}},
    }
    headers = {"Accept": "application/json, text/event-stream"}
    asked = client.post("/mcp", json=call, headers=headers).json()["result"]
    assert asked["isError"] is True and f"{UNEXPECTED}: " in asked["content"][0]["text"]
