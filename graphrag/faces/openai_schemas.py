"""OpenAI's chat-completion wire format, as far as the knowledge chat answers it.

Requests are read leniently (unknown OpenAI parameters are ignored: the server's own sampling
settings apply), answers follow OpenAI's shapes plus a `references` field, and every error is
`{"error": {"message", "type", "param", "code"}}`.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from graphrag.text_input import Bounded, InputText

__all__ = [
    "CompletionRequest",
    "ContentPart",
    "MessageIn",
    "StreamOptions",
    "openai_error",
    "openai_error_type",
]


class ContentPart(BaseModel):
    """One part of a message's content; only `text` parts can be answered."""

    model_config = ConfigDict(extra="ignore")

    type: InputText
    text: InputText | None = None


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: InputText | Annotated[list[ContentPart], Bounded("api.max_list_items")] | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore")

    include_usage: bool = False


class CompletionRequest(BaseModel):
    """`POST /v1/chat/completions`: the last message is the question, the others the history."""

    model_config = ConfigDict(extra="ignore")

    model: InputText = Field(
        min_length=1, description="`kb/<name>`, a base id, or several joined by +"
    )
    messages: Annotated[list[MessageIn], Bounded("api.max_list_items")] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    n: int = Field(default=1, ge=1, le=1, description="one choice only")
    use_graph: bool = Field(default=True, description="let the knowledge graph add passages")
    knowledge_ids: Annotated[list[uuid.UUID], Bounded("chat.max_knowledge_ids")] | None = Field(
        default=None, min_length=1, description="only passages of these documents"
    )

    @property
    def include_usage(self) -> bool:
        return self.stream_options is not None and self.stream_options.include_usage


def openai_error_type(status: int) -> str:
    """OpenAI's error `type` for an HTTP status."""
    if status == 401:
        return "authentication_error"
    if status == 403:
        return "permission_error"
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


def openai_error(status: int, code: str, message: str, param: str | None = None) -> dict[str, Any]:
    """An error in OpenAI's shape; `code` is the backend's stable code."""
    return {
        "error": {
            "message": message,
            "type": openai_error_type(status),
            "param": param,
            "code": code,
        }
    }
