"""Question split over real services: a two-part question becomes sub-questions, each searched
on its own (so the second part's passage is found), and the answer prompt lists them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb, upload, wait_terminal
from tests.support.http_server import ThreadedServer
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

CHAT_TOP_K = 2  # room for one passage per part only
QUESTION = "Who runs the Zorvath Industries plant in Tromso, and what does she play on weekends?"
PARTS = ["Who runs the Zorvath Industries plant in Tromso?", "What does Elin Brask play?"]
ANSWER = "Elin Brask runs it [1] and plays the cello [2]."
CHUNKS = {
    "DIST1": "DIST1. Zorvath Industries runs a plant in Tromso that builds ship engines.",
    "DIST2": "DIST2. The Zorvath Industries plant in Tromso opened in 1998 near the harbour.",
    "DIST3": "DIST3. Zorvath Industries plant workers in Tromso won a safety award.",
    "DIST4": "DIST4. Elin Brask runs the Zorvath Industries plant in Tromso since 2020.",
    "TARGET": "TARGET. Elin Brask keeps bees and plays the cello.",
}
SPLIT_MARK = "split a user's question"  # words of prompt_templates/decompose.yaml
PARTS_MARK = "The question has several parts"  # the `parts` fragment of answer.yaml


def _rules(split_reply: str, system_role: bool) -> list[dict[str, Any]]:
    return [
        {
            "name": "split",
            # Without a system role, the prompt's system text opens the user turn.
            "match": {"system" if system_role else "user": {"contains": SPLIT_MARK}},
            "reply": {"content": split_reply},
        },
        {
            "name": "answer",
            "match": {"user": {"contains": "Passages:"}},
            "reply": {"content": ANSWER},
        },
    ]


@pytest.fixture(scope="module")
def split_api(settings: Settings, auth_headers: dict[str, str]) -> Iterator[httpx.Client]:
    """An API whose chat splits questions and keeps two passages."""
    from api.app import create_app

    chat = settings.chat.model_copy(update={"top_k": CHAT_TOP_K, "decompose": True})
    app = create_app(settings.model_copy(update={"chat": chat}))
    with (
        ThreadedServer(app) as url,
        httpx.Client(base_url=url, timeout=60.0, headers=auth_headers) as client,
    ):
        yield client


def _ask(client: httpx.Client, session_id: str) -> dict[str, Any]:
    reply = client.post(
        f"/api/v1/knowledge-chat/{session_id}", json={"query": QUESTION, "stream": False}
    )
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def _labels(body: dict[str, Any]) -> set[str]:
    return {ref["excerpt"].split(".")[0] for ref in body["references"]}


def test_parts_are_searched_and_answered_each(
    settings: Settings,
    split_api: httpx.Client,
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    fresh_scripted_llm.set_rules(_rules(json.dumps({"questions": PARTS}), settings.llm.system_role))
    kb = create_kb(http, chunking={"chunk_size": 90, "chunk_overlap": 0, "separators": ["\n\n"]})
    text = "\n\n".join(CHUNKS.values()) + f"\n\n{uuid.uuid4()}"
    doc = wait_terminal(http, upload(http, kb["id"], "zorvath.md", text.encode()).json()["id"])
    assert doc["parse_status"] == "completed", doc
    session = split_api.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()

    fresh_scripted_llm.clear_requests()
    split = _ask(split_api, session["id"])
    assert split["answer"] == ANSWER and split["usage"]["llm_calls"] == 4  # split, 2 parts, answer
    prompt = json.dumps(fresh_scripted_llm.requests("/v1/chat/completions")[-1].body)
    assert PARTS_MARK in prompt and f"1. {PARTS[0]}" in prompt and f"2. {PARTS[1]}" in prompt
    assert f"2. {PARTS[1]}\\n   {ANSWER}" in prompt  # each part with its own answer (JSON-escaped)
    assert "TARGET" in _labels(split), split["references"]  # found by the second part alone
    assert len(split["references"]) <= CHAT_TOP_K

    # A split the model botches (not JSON, or one question) leaves the question whole.
    for botched in ("no idea", json.dumps({"questions": [QUESTION]})):
        fresh_scripted_llm.set_rules(_rules(botched, settings.llm.system_role))
        fresh_scripted_llm.clear_requests()
        whole = _ask(split_api, session["id"])
        assert whole["answer"] == ANSWER and whole["usage"]["llm_calls"] == 2
        prompt = json.dumps(fresh_scripted_llm.requests("/v1/chat/completions")[-1].body)
        assert PARTS_MARK not in prompt
        assert "TARGET" not in _labels(whole), whole["references"]


def test_split_off_by_the_setting(
    settings: Settings, http: httpx.Client, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    """The session's API runs with `chat.decompose` off (tests/conftest.py)."""
    fresh_scripted_llm.set_rules(_rules(json.dumps({"questions": PARTS}), settings.llm.system_role))
    kb = create_kb(http)
    session = http.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()
    fresh_scripted_llm.clear_requests()
    body = _ask(http, session["id"])
    assert body["usage"]["llm_calls"] == 1  # the answer only
    assert not any(
        SPLIT_MARK in json.dumps(r.body)
        for r in fresh_scripted_llm.requests("/v1/chat/completions")
    )
