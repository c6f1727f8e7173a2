"""The agent asks again when a reply comes back cut off (finish_reason "length") or empty, at
most `chat.agent_max_answer_retries` times a turn, over the real API, with the scripted model
cutting its replies."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb

pytestmark = pytest.mark.e2e

ANSWER = "The plant is run by Elin Brask."
CUT_AT = 8
STEP = "This is step"


def _ask(
    http: httpx.Client, llm: ScriptedLlmServer, fault: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One agent turn whose model calls all get `fault` (the rule matches every chat call: a
    retry's last user message is the instruction, not the question): the answer and the calls
    it made."""
    rule = {"reply": {"content": ANSWER}, "fault": fault}
    llm.set_rules([rule])
    kb = create_kb(http)
    session = http.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()
    response = http.post(
        f"/api/v1/agent-chat/{session['id']}", json={"query": "Who runs it?", "stream": False}
    )
    assert response.status_code == 200, response.text
    bodies = [r.body for r in llm.requests("/v1/chat/completions")]
    sent = [b for b in bodies if isinstance(b, dict) and STEP in json.dumps(b)]
    return response.json(), sent


def _checks(answer: dict[str, Any]) -> list[str]:
    return [s["summary"] for s in answer["steps"] if s["kind"] == "check"]


def test_a_cut_off_reply_is_asked_again_once(
    http: httpx.Client, settings: Settings, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    answer, sent = _ask(http, fresh_scripted_llm, {"truncate": CUT_AT, "times": 1})
    assert answer["answer"] == ANSWER and answer["completed"] is True
    assert len(sent) == 2 and answer["usage"]["llm_calls"] == 2
    assert _checks(answer) == ["reply cut off, asked again"]
    last = sent[1]["messages"][-1]["content"]
    assert "cut off" in last and ANSWER[:CUT_AT] in json.dumps(sent[1]["messages"])


def test_an_empty_reply_is_asked_again_once(
    http: httpx.Client, settings: Settings, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    answer, sent = _ask(http, fresh_scripted_llm, {"truncate": 0, "times": 1})
    assert answer["answer"] == ANSWER and len(sent) == 2
    assert _checks(answer) == ["empty reply, asked again"]
    assert "was empty" in sent[1]["messages"][-1]["content"]


def test_the_retries_are_bounded_by_the_setting(
    http: httpx.Client, settings: Settings, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    # Every reply cut off: one retry (the default), then the cut reply is the answer.
    assert settings.chat.agent_max_answer_retries == 1
    answer, sent = _ask(http, fresh_scripted_llm, {"truncate": CUT_AT})
    assert len(sent) == 1 + settings.chat.agent_max_answer_retries
    assert answer["answer"] == ANSWER[:CUT_AT] and answer["completed"] is True
    respond = [s for s in answer["steps"] if s["kind"] == "respond"]
    assert [s["summary"] for s in respond] == ["cut off, retries spent"]
