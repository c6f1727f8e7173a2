"""The one chat message type: what prompts, the chat, the agent and the memory's context
budget hold, and what the LLM client sends."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from graphrag.value_model import ValueModel

__all__ = ["ChatMessage", "WireToolCall"]


class WireToolCall(ValueModel):
    """A function call as the model sent it: `arguments` is its raw JSON text."""

    id: str
    name: str
    arguments: str

    def wire(self) -> dict[str, Any]:
        """The call in OpenAI's request format."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


class ChatMessage(ValueModel):
    """One message of a chat completion request. An assistant message may carry the model's
    native tool calls; a `tool` message answers one of them by its id."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: list[WireToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None

    def wire(self) -> dict[str, Any]:
        """The message in OpenAI's request format (the tool fields only when set)."""
        message: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.wire() for call in self.tool_calls]
        if self.tool_call_id is not None:
            message["tool_call_id"] = self.tool_call_id
        return message
