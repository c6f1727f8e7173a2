"""Chat-like requests cannot starve the API, over real HTTP with the scripted LLM slow: an API
whose shared thread pool has two threads takes three streamed chats of each of two keys at
once; one more chat of a full key (knowledge chat, `/v1` chat completions, MCP `ask`) is 429
`chat_busy` at once, `/health` answers within a second meanwhile, every admitted chat ends
with `done`, and a place comes free when its answer is sent or its client goes away."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio.to_thread
import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.orm import Session, sessionmaker
from starlette.types import Receive, Scope, Send

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb
from tests.support.auth_helpers import bearer, make_key
from tests.support.http_server import ThreadedServer

pytestmark = pytest.mark.integration

SHARED_THREADS = 2  # the AnyIO pool of every other sync route, /health included
PER_KEY = 3
CHAT_THREADS = 8
RETRY_AFTER_S = 7
LLM_SLOTS = 2
SLOW_S = 3.0  # each LLM call: the six admitted chats take three rounds of two slots
HEALTH_WITHIN_S = 1.0
RELEASE_WITHIN_S = 30.0
QUESTION = "Who supplies the Sorter X2?"
ANSWER = "Harbor Logistics."
BUSY = "chat_busy"


class _SmallSharedPool:
    """The app with AnyIO's default thread pool cut to `threads` in its server's event loop."""

    def __init__(self, app: FastAPI, threads: int) -> None:
        self.app = app
        self.threads = threads

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            anyio.to_thread.current_default_thread_limiter().total_tokens = self.threads
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def gated_url(settings: Settings) -> Iterator[str]:
    from api.app import create_app

    chat = settings.chat.model_copy(
        update={
            "max_concurrent_per_key": PER_KEY,
            "worker_threads": CHAT_THREADS,
            "busy_retry_after_s": RETRY_AFTER_S,
        }
    )
    llm = settings.llm.model_copy(
        update={"interactive_limit": LLM_SLOTS, "interactive_wait_s": 120.0}
    )
    app = create_app(settings.model_copy(update={"chat": chat, "llm": llm}))
    with ThreadedServer(_SmallSharedPool(app, SHARED_THREADS)) as url:
        yield url


def _client(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers=bearer(key), timeout=120.0)


def _key(sessions: sessionmaker[Session], settings: Settings, name: str) -> str:
    capabilities = [Capability.READ, Capability.WRITE]
    return make_key(sessions, settings, "default", capabilities, name=name).key


def _session(client: httpx.Client, kb_id: str) -> str:
    made = client.post("/api/v1/sessions", json={"kb_ids": [kb_id]})
    assert made.status_code == 201, made.text
    session_id: str = made.json()["id"]
    return session_id


def _open_chat(client: httpx.Client, session_id: str) -> httpx.Response:
    """A streamed chat whose headers arrived (admitted and started), its body still unread."""
    request = client.build_request(
        "POST", f"/api/v1/knowledge-chat/{session_id}", json={"query": QUESTION}
    )
    response = client.send(request, stream=True)
    assert response.status_code == 200, response.read()
    return response


def _events(response: httpx.Response) -> list[str]:
    try:
        return [
            line.removeprefix("event: ")
            for line in response.iter_lines()
            if line.startswith("event: ")
        ]
    finally:
        response.close()


def _assert_busy(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 429, response.text
    assert response.headers["Retry-After"] == str(RETRY_AFTER_S)
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == BUSY
    return error


def _mcp_ask(client: httpx.Client, kb_id: str) -> dict[str, Any]:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "ask", "arguments": {"kb": kb_id, "question": QUESTION}},
    }
    headers = {"Accept": "application/json, text/event-stream"}
    response = client.post("/mcp", json=call, headers=headers)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


def _health_time(client: httpx.Client) -> float:
    start = time.monotonic()
    assert client.get("/health").status_code == 200
    return time.monotonic() - start


def test_a_key_past_its_chats_at_once_is_429_and_health_stays_fast(
    gated_url: str,
    settings: Settings,
    session_factory: sessionmaker[Session],
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    fresh_scripted_llm.set_script({"latency_s": SLOW_S, "default": {"content": ANSWER}})
    with (
        _client(gated_url, _key(session_factory, settings, "gate-a")) as first,
        _client(gated_url, _key(session_factory, settings, "gate-b")) as second,
        httpx.Client(base_url=gated_url, timeout=30.0) as anonymous,
    ):
        kb_id = create_kb(first)["id"]
        session_a, session_b = _session(first, kb_id), _session(second, kb_id)
        running = [_open_chat(first, session_a) for _ in range(PER_KEY)]
        running += [_open_chat(second, session_b) for _ in range(PER_KEY)]

        # Both keys are full: one more chat of either, on any face, is refused at once.
        chat = first.post(f"/api/v1/knowledge-chat/{session_a}", json={"query": QUESTION})
        assert _assert_busy(chat)["details"]["limit"] == PER_KEY
        _assert_busy(second.post(f"/api/v1/agent-chat/{session_b}", json={"query": QUESTION}))
        completion = {"model": kb_id, "messages": [{"role": "user", "content": QUESTION}]}
        openai = first.post("/v1/chat/completions", json={**completion, "stream": True})
        assert openai.status_code == 429 and openai.json()["error"]["code"] == BUSY
        assert openai.headers["Retry-After"] == str(RETRY_AFTER_S)
        asked = _mcp_ask(first, kb_id)
        assert asked["isError"] is True and f"{BUSY}: " in asked["content"][0]["text"]

        # Six chats wait on the LLM, more than the shared pool has threads: it still serves.
        slowest = max(_health_time(anonymous) for _ in range(5))
        assert slowest < HEALTH_WITHIN_S, slowest
        assert second.get("/api/v1/knowledge-bases").status_code == 200

        assert [_events(r)[-1] for r in running] == ["done"] * (2 * PER_KEY)
        assert fresh_scripted_llm.slot_stats().peak_received == LLM_SLOTS

        # Every place came free with its answer: the key runs as many chats again.
        fresh_scripted_llm.set_script({"default": {"content": ANSWER}})
        again = [_open_chat(first, session_a) for _ in range(PER_KEY)]
        assert [_events(r)[-1] for r in again] == ["done"] * PER_KEY
        whole = first.post("/v1/chat/completions", json=completion)
        assert whole.status_code == 200, whole.text
        assert whole.json()["choices"][0]["message"]["content"] == ANSWER
        assert _mcp_ask(first, kb_id)["isError"] is False


def test_a_client_gone_mid_stream_frees_its_place(
    gated_url: str,
    settings: Settings,
    session_factory: sessionmaker[Session],
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    fresh_scripted_llm.set_script({"latency_s": SLOW_S, "default": {"content": ANSWER}})
    with _client(gated_url, _key(session_factory, settings, "gate-gone")) as client:
        session_id = _session(client, create_kb(client)["id"])
        running = [_open_chat(client, session_id) for _ in range(PER_KEY)]
        body = {"query": QUESTION, "stream": False}
        _assert_busy(client.post(f"/api/v1/knowledge-chat/{session_id}", json=body))

        running.pop().close()  # the client goes away before the answer
        deadline = time.monotonic() + RELEASE_WITHIN_S
        answered = client.post(f"/api/v1/knowledge-chat/{session_id}", json=body)
        while answered.status_code == 429 and time.monotonic() < deadline:
            time.sleep(0.2)
            answered = client.post(f"/api/v1/knowledge-chat/{session_id}", json=body)
        assert answered.status_code == 200, answered.text
        assert answered.json()["answer"] == ANSWER
        assert [_events(r)[-1] for r in running] == ["done"] * (PER_KEY - 1)
