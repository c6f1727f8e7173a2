"""The one chat message type goes out in OpenAI's request format, tool fields only when set."""

from __future__ import annotations

import pytest

from graphrag.llm.messages import ChatMessage, WireToolCall

pytestmark = pytest.mark.unit


def test_a_plain_message_is_role_and_content() -> None:
    assert ChatMessage(role="user", content="hi").wire() == {"role": "user", "content": "hi"}


def test_tool_calls_and_their_answers_carry_the_call_ids() -> None:
    call = WireToolCall(id="c1", name="read_file", arguments='{"path": "notes.md"}')
    asked = ChatMessage(role="assistant", content="", tool_calls=[call])
    assert asked.wire() == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "notes.md"}'},
            }
        ],
    }
    answer = ChatMessage(role="tool", content="ok", tool_call_id="c1")
    assert answer.wire() == {"role": "tool", "content": "ok", "tool_call_id": "c1"}
