"""Old tool results cut down before a conversation goes back to the model.

A tool result matters when it arrives; later calls only need to know what it said. Results
older than the last `keep_last` messages are cut to `max_chars`, with a marker saying how much
went; the last messages are sent whole. Shared by the agent loop (within a turn) and the
memory's context budget (a logged conversation).
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self, TypeVar

__all__ = ["ToolResultCut", "cut_text"]

TOOL_ROLE = "tool"


class _Message(Protocol):
    """A chat message model: a role, a text, and a copy with other values."""

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with the values of `update`."""
        ...


_M = TypeVar("_M", bound=_Message)


def cut_text(text: str, max_chars: int) -> str:
    """`text` cut to `max_chars`, with a marker saying how much was dropped."""
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]} [... {len(text) - max_chars} characters cut]"


@dataclass(frozen=True)
class ToolResultCut:
    """Tool results before the last `keep_last` messages are cut to `max_chars`."""

    keep_last: int
    max_chars: int

    def apply(self, messages: Sequence[_M], written: Container[int] = ()) -> tuple[list[_M], int]:
        """(the messages with old results cut, how many were cut). A result is a `tool`
        message, or one whose index is in `written` (results handed back as text to a model
        that writes its calls instead of making native ones)."""
        boundary = max(len(messages) - self.keep_last, 0)
        result: list[_M] = []
        cut = 0
        for index, message in enumerate(messages):
            is_result = message.role == TOOL_ROLE or index in written
            if index < boundary and is_result and len(message.content) > self.max_chars:
                message = message.model_copy(
                    update={"content": cut_text(message.content, self.max_chars)}
                )
                cut += 1
            result.append(message)
        return result, cut
