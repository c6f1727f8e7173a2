"""Logged messages rebuilt as OpenAI chat messages (tool calls and tool results included)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphrag.db.enums import MessageRole
from graphrag.memory.context_budget import ContextMessage
from graphrag.memory.recall_log import RecallEntry

__all__ = ["TOOL_CALLS_KEY", "TOOL_CALL_ID_KEY", "TOOL_NAME_KEY", "to_openai_messages"]

TOOL_CALLS_KEY = "tool_calls"
TOOL_CALL_ID_KEY = "tool_call_id"
TOOL_NAME_KEY = "name"


def _tool_calls(data: dict[str, Any]) -> list[dict[str, Any]] | None:
    calls = data.get(TOOL_CALLS_KEY)
    if isinstance(calls, list) and calls:
        return [c for c in calls if isinstance(c, dict)]
    return None


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return str(value) if value is not None else None


def to_openai_messages(messages: Sequence[RecallEntry]) -> list[ContextMessage]:
    """One OpenAI message per logged message, in order."""
    result: list[ContextMessage] = []
    for message in messages:
        data = message.tool_data
        if message.role == MessageRole.ASSISTANT:
            result.append(
                ContextMessage(
                    role="assistant", content=message.content, tool_calls=_tool_calls(data)
                )
            )
        elif message.role == MessageRole.TOOL:
            result.append(
                ContextMessage(
                    role="tool",
                    content=message.content,
                    tool_call_id=_text(data, TOOL_CALL_ID_KEY),
                    name=_text(data, TOOL_NAME_KEY),
                )
            )
        else:
            result.append(ContextMessage(role=message.role.value, content=message.content))
    return result
