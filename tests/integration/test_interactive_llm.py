"""Interactive LLM calls (previews, the chat's question entities and answer) through their own
limiter, over real HTTP, real Redis and the scripted LLM server: the server never sees more of
them at once than the limit, entity extraction and previews ask for few tokens, and a call
that waits too long for a slot is a 503 `llm_busy` with Retry-After."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb, read_sse
from tests.support.http_server import ThreadedServer

pytestmark = pytest.mark.integration

LIMIT = 2
PREVIEW_MAX_TOKENS = 77
ENTITY_MAX_TOKENS = 55
TAGS = '["supplies", "works for"]'
PREVIEWS = 4
CHATS = 2


def _api(settings: Settings, limit: int, wait_s: float) -> FastAPI:
    from api.app import create_app

    llm = settings.llm.model_copy(update={"interactive_limit": limit, "interactive_wait_s": wait_s})
    previews = settings.previews.model_copy(update={"max_tokens": PREVIEW_MAX_TOKENS})
    chat = settings.chat.model_copy(update={"entity_max_tokens": ENTITY_MAX_TOKENS})
    return create_app(settings.model_copy(update={"llm": llm, "previews": previews, "chat": chat}))


@pytest.fixture(scope="module")
def limited(settings: Settings, auth_headers: dict[str, str]) -> Iterator[httpx.Client]:
    with (
        ThreadedServer(_api(settings, LIMIT, wait_s=60.0)) as url,
        httpx.Client(base_url=url, timeout=120.0, headers=auth_headers) as client,
    ):
        yield client


def _chat_bodies(llm: ScriptedLlmServer) -> list[dict[str, Any]]:
    return [r.body for r in llm.requests("/v1/chat/completions") if isinstance(r.body, dict)]


def _suggest(client: httpx.Client) -> httpx.Response:
    return client.post(
        "/api/v1/initialization/extract/fabri-tag",
        json={"text": "Harbor Logistics supplies the Sorter X2 to Moreau Freight."},
    )


def _chat(client: httpx.Client, session_id: str) -> list[tuple[str, Any]]:
    body = {"query": "Who supplies the Sorter X2?"}
    return read_sse(client, f"/api/v1/knowledge-chat/{session_id}", body)


def test_interactive_calls_stay_within_the_limit_and_ask_for_few_tokens(
    limited: httpx.Client, settings: Settings, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    fresh_scripted_llm.set_script({"latency_s": 0.3, "default": {"content": TAGS}})
    kb = create_kb(
        limited,
        indexing={"graph_enabled": True},
        extract_config={"enabled": True, "tags": ["supplies"]},
    )
    session = limited.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()

    with ThreadPoolExecutor(PREVIEWS + CHATS) as calls:
        previews = [calls.submit(_suggest, limited) for _ in range(PREVIEWS)]
        chats = [calls.submit(_chat, limited, session["id"]) for _ in range(CHATS)]
        suggested = [future.result() for future in previews]
        answered = [future.result() for future in chats]

    assert [r.status_code for r in suggested] == [200] * PREVIEWS, [r.text for r in suggested]
    assert all(events[-1][0] == "done" for events in answered), answered
    stats = fresh_scripted_llm.slot_stats()
    assert stats.peak_received == LIMIT, stats  # reached, never passed
    bodies = _chat_bodies(fresh_scripted_llm)
    entity_calls = [b for b in bodies if "response_format" in b]
    answers = [b for b in bodies if b.get("stream")]
    suggestions = [b for b in bodies if b not in entity_calls and b not in answers]
    assert len(entity_calls) == CHATS and len(answers) == CHATS and len(suggestions) == PREVIEWS
    assert {b["max_tokens"] for b in entity_calls} == {ENTITY_MAX_TOKENS}
    assert {b["max_tokens"] for b in suggestions} == {PREVIEW_MAX_TOKENS}
    assert {b["max_tokens"] for b in answers} == {settings.chat.answer_max_tokens}


def test_a_call_that_waits_too_long_for_a_slot_is_503_llm_busy(
    settings: Settings, auth_headers: dict[str, str], fresh_scripted_llm: ScriptedLlmServer
) -> None:
    fresh_scripted_llm.set_script({"latency_s": 3.0, "default": {"content": TAGS}})
    with (
        ThreadedServer(_api(settings, limit=1, wait_s=0.5)) as url,
        httpx.Client(base_url=url, timeout=60.0, headers=auth_headers) as client,
        ThreadPoolExecutor(2) as calls,
    ):
        responses = list(calls.map(lambda _: _suggest(client), range(2)))

    assert sorted(r.status_code for r in responses) == [200, 503], [r.text for r in responses]
    busy = next(r for r in responses if r.status_code == 503)
    assert busy.json()["error"]["code"] == "llm_busy"
    assert int(busy.headers["Retry-After"]) >= 1
    assert fresh_scripted_llm.slot_stats().peak_received == 1
