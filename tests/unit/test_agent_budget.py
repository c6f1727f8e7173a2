"""The agent's whole-prompt budget: what goes first when a call's prompt is over it."""

from __future__ import annotations

import pytest

from graphrag.chat.agent_budget import AgentCall, fit_agent_call
from graphrag.chat.prompt_budget import prompt_chars
from graphrag.llm.messages import ChatMessage

pytestmark = pytest.mark.unit

MEMORY = "m" * 1000


def _system(cut: int) -> str:
    return "rules\n" + MEMORY[: len(MEMORY) - cut]


def _call() -> AgentCall:
    history = [
        ChatMessage(role="user", content="old question " + "h" * 500),
        ChatMessage(role="assistant", content="old answer " + "a" * 500),
    ]
    dialogue = [
        ChatMessage(role="user", content="the question"),
        ChatMessage(role="assistant", content="calling"),
        ChatMessage(role="tool", content="first result " + "r" * 2000, tool_call_id="1"),
        ChatMessage(role="assistant", content="calling again"),
        ChatMessage(role="user", content="written result " + "w" * 2000),
    ]
    return AgentCall([*history, *dialogue], question_at=2, results={6})


def _whole(call: AgentCall) -> int:
    return len(_system(0)) + 2 + prompt_chars(call.messages)


def test_a_call_within_the_budget_is_sent_as_it_is() -> None:
    call = _call()
    sent = fit_agent_call(_system, call, _whole(call))
    assert sent[0].content == _system(0) and sent[1:] == list(call.messages)


def test_the_oldest_exchange_goes_first_whole() -> None:
    call = _call()
    sent = fit_agent_call(_system, call, _whole(call) - 200)
    assert prompt_chars(sent) <= _whole(call) - 200
    # The old answer alone would have been enough, but a dialogue starts with a user turn.
    assert sent[1:] == list(call.messages[2:])


def test_then_older_results_then_the_latest_result_then_the_memory() -> None:
    call = _call()
    budget = _whole(call) - 2000
    sent = fit_agent_call(_system, call, budget)
    assert prompt_chars(sent) <= budget
    assert sent[1].content == "the question"
    assert "characters cut" in sent[3].content  # the first result
    assert sent[-1] == call.messages[6]  # the latest result still whole

    tight = fit_agent_call(_system, call, 800)
    assert prompt_chars(tight) <= 800
    assert tight[1].content == "the question" and "characters cut" in tight[-1].content
    assert len(tight[0].content) < len(_system(0))  # the memory block was cut last
