"""A chat over a knowledge base, its session closed into the agent memory, then a new session:
what the first one taught is in the second one's prompt; core memory is in every turn's."""

from __future__ import annotations

import json
import time
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

CLOSE_TIMEOUT_S = 120.0
CORE_TEXT = "The user is Maren Lund, a harbour engineer who wants answers in metric units."
FIRST_QUESTION = "What does the Quillon harbour crane lift?"
FIRST_ANSWER = "The Quillon harbour crane lifts forty tonne containers [1]."


def _chat(http: httpx.Client, session_id: str, query: str) -> dict[str, object]:
    response = http.post(
        f"/api/v1/knowledge-chat/{session_id}", json={"query": query, "stream": False}
    )
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


def test_memory_of_session_one_reaches_session_two(
    http: httpx.Client, worker: WorkerProcess, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    fresh_scripted_llm.set_rules(
        [{"match": {"user": {"contains": "Passages:"}}, "reply": {"content": FIRST_ANSWER}}],
        default={"content": "[]"},
    )
    owner = f"owner-{uuid.uuid4().hex[:8]}"
    kb = create_kb(http)
    text = "The Quillon harbour crane lifts containers of forty tonnes."
    wait_terminal(http, upload(http, kb["id"], "crane.md", text.encode()).json()["id"])

    first = http.post("/api/v1/sessions", json={"kb_ids": [kb["id"]], "owner": owner}).json()
    assert _chat(http, first["id"], FIRST_QUESTION)["completed"] is True
    closing = http.post(f"/api/v1/memory/sessions/{first['id']}/close", json={"owner": owner})
    assert closing.status_code == 202, closing.text
    deadline = time.monotonic() + CLOSE_TIMEOUT_S
    report_url = f"/api/v1/memory/sessions/{first['id']}/close-report"
    while (report := http.get(report_url, params={"owner": owner})).status_code != 200:
        assert time.monotonic() < deadline, report.text
        time.sleep(0.5)
    assert report.json()

    fresh_scripted_llm.clear_requests()
    second = http.post("/api/v1/sessions", json={"kb_ids": [kb["id"]], "owner": owner}).json()
    _chat(http, second["id"], "Remind me what the crane lifts.")
    prompts = [
        json.dumps(r.body)
        for r in fresh_scripted_llm.requests("/v1/chat/completions")
        if "Passages:" in json.dumps(r.body)
    ]
    assert prompts, "no answer prompt was sent"
    assert "forty tonne containers" in prompts[-1] or FIRST_QUESTION in prompts[-1], prompts[-1]


def _system_text(settings: Settings, body: Any) -> str:
    """The system text of a chat request (leading the first user turn without a system role)."""
    messages = body["messages"]
    if settings.llm.system_role:
        return "\n".join(m["content"] for m in messages if m["role"] == "system")
    return str(next(m["content"] for m in messages if m["role"] == "user"))


@pytest.mark.parametrize("mode", ["knowledge-chat", "agent-chat"])
def test_core_memory_is_in_every_turns_system_prompt(
    http: httpx.Client, settings: Settings, fresh_scripted_llm: ScriptedLlmServer, mode: str
) -> None:
    fresh_scripted_llm.set_rules([], default={"content": "Forty tonnes."})
    owner = f"owner-{uuid.uuid4().hex[:8]}"
    core = http.put("/api/v1/memory/core/profile", json={"text": CORE_TEXT, "owner": owner})
    assert core.status_code == 200, core.text
    kb = create_kb(http)
    session = http.post("/api/v1/sessions", json={"kb_ids": [kb["id"]], "owner": owner}).json()
    for question in ("What does the crane lift?", "And how high?"):
        fresh_scripted_llm.clear_requests()
        answer = http.post(
            f"/api/v1/{mode}/{session['id']}", json={"query": question, "stream": False}
        ).json()
        assert answer["completed"] is True, answer
        # The answer is the turn's last LLM call; its system text carries the core memory.
        last = fresh_scripted_llm.requests("/v1/chat/completions")[-1]
        system = _system_text(settings, last.body)
        assert f"# Core memory\n## profile\n{CORE_TEXT}" in system, (question, system)
    stored = http.get(f"/api/v1/sessions/{session['id']}").json()["messages"]
    assert len(stored) == 4  # the second turn had the first in its history


COMPACT_AT_CHARS = 400
KEEP_LAST = 2
TURNS = 4


@pytest.fixture(scope="module")
def compacting_api(settings: Settings, auth_headers: dict[str, str]) -> Iterator[httpx.Client]:
    """An API whose memory compacts a conversation past a few hundred characters."""
    from api.app import create_app

    memory = settings.memory.model_copy(
        update={"compact_threshold_chars": COMPACT_AT_CHARS, "keep_last_messages": KEEP_LAST}
    )
    app = create_app(settings.model_copy(update={"memory": memory}))
    with (
        ThreadedServer(app) as url,
        httpx.Client(base_url=url, timeout=60.0, headers=auth_headers) as client,
    ):
        yield client


def test_long_session_is_compacted_into_one_summary(
    compacting_api: httpx.Client,
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    long_answer = "The crane report says: " + "lifting went well. " * 15
    fresh_scripted_llm.set_rules(
        [{"match": {"user": {"contains": "Passages:"}}, "reply": {"content": long_answer}}],
        default={"content": "[]"},
    )
    owner = f"owner-{uuid.uuid4().hex[:8]}"
    kb = create_kb(http)
    wait_terminal(http, upload(http, kb["id"], "c.md", b"The crane lifts containers.").json()["id"])
    chat = compacting_api.post("/api/v1/sessions", json={"kb_ids": [kb["id"]], "owner": owner})
    session_id = chat.json()["id"]
    for turn in range(TURNS):
        _chat(compacting_api, session_id, f"Question number {turn} about the crane?")
    last = json.dumps(fresh_scripted_llm.requests("/v1/chat/completions")[-1].body)
    assert "The conversation so far, summarised" in last
    assert "Question number 0" in last.split("Passages:")[0]  # folded into the summary
    facts = compacting_api.get("/api/v1/memory/facts", params={"owner": owner}).json()
    summaries = [f for f in facts["items"] if f["kind"] == "summary"]
    assert len(summaries) == 1 and summaries[0]["session_id"] == session_id


def test_agent_mode_gets_the_summary_of_the_folded_turns(
    compacting_api: httpx.Client, http: httpx.Client, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    long_answer = "The crane report says:" + " lifting went well." * 15
    fresh_scripted_llm.set_rules([], default={"content": long_answer})
    kb = create_kb(http)
    session = compacting_api.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()
    for turn in range(TURNS):
        answer = compacting_api.post(
            f"/api/v1/agent-chat/{session['id']}",
            json={"query": f"Question number {turn} about the crane?", "stream": False},
        ).json()
        assert answer["completed"] is True and answer["answer"] == long_answer, answer
    body = fresh_scripted_llm.requests("/v1/chat/completions")[-1].body
    assert isinstance(body, dict) and isinstance(body["messages"], list)
    sent = [str(m["content"]) for m in body["messages"] if isinstance(m, dict)]
    # The agent's system text (its own message, or leading the first user turn without a
    # system role) holds the summary of what was folded; the last turns follow it whole.
    system = next(text for text in sent if "This is step 1 of" in text)
    summary = system.split("The conversation so far, summarised:\n", 1)[1]
    assert summary.startswith("Summary of the earlier conversation")
    assert "Objective: Question number 0 about the crane?" in summary
    assert not any("Question number 0" in text for text in sent if text != system)
    assert sent[-1].endswith("Question number 3 about the crane?")
