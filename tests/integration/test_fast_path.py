"""Greetings, thanks and empty questions are answered from `chat.fast_path` over the real API,
with no retrieval and no model call: the scripted server sees nothing."""

from __future__ import annotations

import httpx
import pytest

from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb, read_sse

pytestmark = pytest.mark.integration

MODEL_ANSWER = "An answer from the model."


def _rule_answer(settings: Settings, name: str) -> str:
    [rule] = [r for r in settings.chat.fast_path.rules if r.name == name]
    return rule.answer


def _session(http: httpx.Client) -> str:
    kb = create_kb(http)
    session = http.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()
    session_id: str = session["id"]
    return session_id


def test_greeting_thanks_and_empty_questions_skip_the_model(
    http: httpx.Client, settings: Settings, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    fresh_scripted_llm.set_rules([], default={"content": MODEL_ANSWER})
    session_id = _session(http)
    asked = {
        "Hello!": _rule_answer(settings, "greeting"),
        "  Thank you very much.  ": _rule_answer(settings, "thanks"),
        " ?! ": settings.chat.fast_path.empty_answer,
    }
    for question, expected in asked.items():
        body = {"query": question, "stream": False}
        answer = http.post(f"/api/v1/knowledge-chat/{session_id}", json=body).json()
        assert answer["answer"] == expected and answer["completed"] is True, answer
        assert answer["references"] == [] and answer["usage"] is None
    agent = http.post(
        f"/api/v1/agent-chat/{session_id}", json={"query": "Merci beaucoup", "stream": False}
    ).json()
    assert agent["answer"] == _rule_answer(settings, "thanks") and agent["steps"] == []
    assert fresh_scripted_llm.requests() == []  # no chat call, no embedding call

    stored = http.get(f"/api/v1/sessions/{session_id}").json()["messages"]
    assert [m["content"] for m in stored[::2]] == [*asked, "Merci beaucoup"]
    assert stored[1]["steps"] == [{"stage": "fast_path", "rule": "greeting"}]


def test_a_greeting_inside_a_question_goes_to_the_model(
    http: httpx.Client, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    fresh_scripted_llm.set_rules([], default={"content": MODEL_ANSWER})
    session_id = _session(http)
    events = read_sse(
        http, f"/api/v1/knowledge-chat/{session_id}", {"query": "Hello, who runs the plant?"}
    )
    assert "".join(d["content"] for n, d in events if n == "delta") == MODEL_ANSWER
    assert len(fresh_scripted_llm.requests("/v1/chat/completions")) == 1


def test_the_fast_path_streams_the_events_of_its_mode(
    http: httpx.Client, settings: Settings, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    session_id = _session(http)
    events = read_sse(http, f"/api/v1/agent-chat/{session_id}", {"query": "hi"})
    assert [n for n, _ in events] == ["references", "delta", "done"]
    assert events[0][1]["tools"] == [] and events[2][1]["steps"] == 0
    assert events[1][1]["content"] == _rule_answer(settings, "greeting")
    assert fresh_scripted_llm.requests() == []
