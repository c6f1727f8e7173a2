"""The context budget: old tool results cut, one deterministic summary, the last 6 kept."""

from __future__ import annotations

import pytest

from graphrag.llm.messages import ChatMessage, WireToolCall
from graphrag.llm.tool_results import ToolResultCut
from graphrag.memory.context_budget import (
    context_chars,
    fit_context,
    summarize_messages,
)
from graphrag.settings import MemorySettings, get_settings

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def memory() -> MemorySettings:
    return get_settings().memory


@pytest.fixture(scope="module")
def small(memory: MemorySettings) -> MemorySettings:
    """The same rules on a small budget, so tests stay short."""
    return memory.model_copy(
        update={"compact_threshold_chars": 2_000, "tool_result_max_chars": 100}
    )


def _call(call_id: str, name: str) -> WireToolCall:
    return WireToolCall(id=call_id, name=name, arguments='{"path": "notes.md"}')


def _conversation(turns: int, body: int) -> list[ChatMessage]:
    messages = [ChatMessage(role="system", content="You are a careful assistant.")]
    for i in range(turns):
        messages += [
            ChatMessage(role="user", content=f"Question {i}: " + "q" * body),
            ChatMessage(role="assistant", content="", tool_calls=[_call(f"c{i}", "read_file")]),
            ChatMessage(role="tool", content="r" * body, tool_call_id=f"c{i}"),
            ChatMessage(role="assistant", content=f"Answer {i}\nmore detail " + "a" * body),
        ]
    return messages


def test_configured_budget_is_the_specified_one(memory: MemorySettings) -> None:
    assert memory.compact_threshold_chars == 40_000
    assert memory.tool_result_max_chars == 5_000
    assert memory.keep_last_messages == 6


def test_small_context_is_left_alone(small: MemorySettings) -> None:
    messages = _conversation(2, 20)
    fitted = fit_context(messages, small)
    assert fitted.summary is None and fitted.summarized_messages == 0
    assert fitted.messages == messages


def test_old_tool_results_are_cut_recent_ones_kept() -> None:
    messages = _conversation(3, 300)[1:]
    cut, count = ToolResultCut(keep_last=6, max_chars=100).apply(messages)
    old_tool, recent_tool = cut[2], cut[10]
    assert old_tool.role == recent_tool.role == "tool"
    assert old_tool.content.startswith("r" * 100) and "200 characters cut" in old_tool.content
    assert recent_tool == messages[10]  # inside the last 6: intact
    assert cut[6] == messages[6]  # the sixth from the end: intact too
    assert count == 1
    assert cut[-6:] == messages[-6:]


def test_compaction_keeps_last_six_and_puts_summary_in_single_system(
    small: MemorySettings,
) -> None:
    messages = _conversation(6, 200)
    assert context_chars(messages) > small.compact_threshold_chars
    fitted = fit_context(messages, small)
    assert fitted.summary is not None
    assert [m.role for m in fitted.messages].count("system") == 1
    assert fitted.messages[0].role == "system"
    assert fitted.messages[0].content.startswith("You are a careful assistant.")
    assert fitted.summary in fitted.messages[0].content
    assert fitted.messages[-6:] == messages[-6:]
    assert fitted.messages[1].role != "tool"
    assert fitted.summarized_messages + len(fitted.messages) - 1 == len(messages) - 1
    assert fitted.chars_after < fitted.chars_before


def test_summary_is_deterministic_and_structured(small: MemorySettings) -> None:
    messages = _conversation(6, 200)
    first, second = fit_context(messages, small), fit_context(list(messages), small)
    assert first == second
    summary = first.summary or ""
    assert "Objective: Question 0:" in summary
    assert "- called read_file(" in summary
    assert "- answered: Answer" in summary
    assert "Progress: Answer" in summary


def test_tail_never_starts_with_an_orphan_tool_result(small: MemorySettings) -> None:
    # The sixth message from the end is a tool result: its call must stay with it.
    messages = _conversation(6, 200)
    assert messages[-6].role == "tool"
    fitted = fit_context(messages, small)
    tail = fitted.messages[1:]
    assert tail[0].role == "assistant" and tail[0].tool_calls
    assert tail[1].tool_call_id == tail[0].tool_calls[0].id
    assert tail[-6:] == messages[-6:]


def test_summary_caps_actions(memory: MemorySettings) -> None:
    messages = _conversation(30, 5)[1:]
    capped = memory.model_copy(update={"summary_max_actions": 3})
    summary = summarize_messages(messages, capped)
    assert summary.count("\n- ") == 3
