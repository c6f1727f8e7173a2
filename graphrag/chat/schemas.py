"""Chat sessions, messages, requests, the events a chat turn emits and the answers it returns.

Each event's payload is a model whose `event` names it; the API streams it as one Server-Sent
Event (`event: <name>`, `data: <payload as JSON>`). The non-streamed answers hold the same.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from graphrag.db.enums import MessageRole
from graphrag.errors import GraphragError
from graphrag.search.models import GraphContribution, SearchHit
from graphrag.text_input import Bounded, InputText, RequestModel

__all__ = [
    "AgentChatAnswer",
    "AgentDoneEvent",
    "AgentReferencesEvent",
    "AgentStep",
    "ChatAnswer",
    "ChatEvent",
    "ChatEventType",
    "ChatRequest",
    "ChatUsage",
    "DeltaEvent",
    "DoneEvent",
    "ErrorEvent",
    "EventPayload",
    "MessagePublic",
    "Reference",
    "ReferencesEvent",
    "SessionCreate",
    "SessionPublic",
    "SessionUpdate",
    "SessionWithMessages",
    "StepKind",
]


KbIds = Annotated[list[uuid.UUID], Bounded("chat.max_kbs")]


class SessionCreate(RequestModel):
    model_config = ConfigDict(extra="forbid")

    title: InputText = Field(default="", max_length=300)
    kb_ids: KbIds = Field(default_factory=list)
    owner: InputText | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="whose agent memory the session feeds (default: the key's owner)",
    )


class SessionUpdate(RequestModel):
    model_config = ConfigDict(extra="forbid")

    title: InputText = Field(max_length=300)


class SessionPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    title: str
    owner: str
    kb_ids: list[uuid.UUID]
    created_at: datetime
    updated_at: datetime


class Reference(BaseModel):
    """A passage the answer may cite as [n]."""

    n: int
    chunk_id: uuid.UUID
    knowledge_id: uuid.UUID
    kb_id: uuid.UUID
    file_name: str
    page: int | None
    match_type: str
    excerpt: str
    graph: GraphContribution | None = None  # how the graph ranked this passage, when it did

    @classmethod
    def from_hit(cls, n: int, hit: SearchHit, excerpt: str) -> Reference:
        """Reference number `n` for a retrieved chunk."""
        return cls(
            n=n,
            chunk_id=hit.chunk_id,
            knowledge_id=hit.knowledge_id,
            kb_id=hit.kb_id,
            file_name=hit.file_name,
            page=hit.page,
            match_type=hit.match_type.value,
            excerpt=excerpt,
            graph=hit.graph,
        )


class MessagePublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    role: MessageRole
    content: str
    references: list[Reference]
    steps: list[dict[str, Any]]
    completed: bool
    created_at: datetime


class SessionWithMessages(SessionPublic):
    """A session with one page of its messages (oldest first): `messages_total` in all."""

    messages: list[MessagePublic]
    messages_total: int
    page: int
    page_size: int


class ChatRequest(RequestModel):
    """One question. The scope is the session's bases unless `kb_ids` narrows or replaces it."""

    model_config = ConfigDict(extra="forbid")

    query: InputText = Field(min_length=1)
    kb_ids: KbIds | None = None
    knowledge_ids: Annotated[list[uuid.UUID], Bounded("chat.max_knowledge_ids")] | None = None
    use_graph: bool = True
    stream: bool = True


class ChatEventType(StrEnum):
    REFERENCES = "references"
    DELTA = "delta"
    STEP = "step"
    DONE = "done"
    ERROR = "error"


class StepKind(StrEnum):
    THINK = "think"  # text the model wrote beside its tool calls
    ACT = "act"  # one tool call, with its arguments
    OBSERVE = "observe"  # what the call returned, summarised
    CHECK = "check"  # a reply refused by the checks (empty, cut off), asked again
    REFLECT = "reflect"  # an answer sent back once for citing no passage
    FORCE_RESPOND = "force_respond"  # the step budget is spent: answer without tools
    RESPOND = "respond"  # the answer is accepted


class AgentStep(BaseModel):
    """One event of the agent loop; `step` is the number of the model call it belongs to."""

    event: ClassVar[ChatEventType] = ChatEventType.STEP

    step: int
    kind: StepKind
    tool: str | None = None
    arguments: dict[str, Any] | None = None
    summary: str = ""
    detail: dict[str, Any] = Field(default_factory=dict)


class ChatUsage(BaseModel):
    """Tokens the turn's LLM calls cost, summed from what the LLM server reported."""

    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    total_tokens: int = Field(ge=0)
    llm_calls: int = Field(ge=0, description="LLM calls of the turn (reported or not)")


class ReferencesEvent(BaseModel):
    """The numbered passages the answer may cite, before the answer."""

    event: ClassVar[ChatEventType] = ChatEventType.REFERENCES

    references: list[Reference]
    entities: list[str] = Field(description="entity names the graph was searched for")
    graph_truncated: bool = Field(
        default=False, description="the graph search stopped at one of its caps"
    )


class AgentReferencesEvent(ReferencesEvent):
    """The passages the agent's tools returned, numbered as the model saw them."""

    tools: list[str] = Field(description="the tools the model was offered")


class DeltaEvent(BaseModel):
    """A piece of the answer's text."""

    event: ClassVar[ChatEventType] = ChatEventType.DELTA

    content: str


class DoneEvent(BaseModel):
    """The answer is complete."""

    event: ClassVar[ChatEventType] = ChatEventType.DONE

    answer_chars: int
    timings_ms: dict[str, float] = Field(description="each stage's time, and `total`")
    references: int = Field(description="how many references the answer may cite")
    usage: ChatUsage | None = Field(
        description="token usage of the turn's LLM calls; null when the server reported none"
    )


class AgentDoneEvent(DoneEvent):
    """The agent's answer is complete: how many model calls it took."""

    steps: int
    reflections: int
    forced: bool = Field(description="the step budget ran out: answered without tools")


class ErrorEvent(BaseModel):
    """The turn stopped on an error, named by its stable code (the LLM down or refusing the
    request, the embedder or the graph failing); the question is kept, marked incomplete."""

    event: ClassVar[ChatEventType] = ChatEventType.ERROR

    code: str
    message: str

    @classmethod
    def of(cls, error: GraphragError) -> ErrorEvent:
        """The event naming `error`."""
        return cls(code=error.code, message=error.message)


EventPayload = ReferencesEvent | DeltaEvent | AgentStep | DoneEvent | ErrorEvent


@dataclass(frozen=True)
class ChatEvent:
    """One event of a turn; its type is its payload's."""

    data: EventPayload

    @property
    def type(self) -> ChatEventType:
        """The event's name on the wire."""
        return self.data.event


class ChatAnswer(BaseModel):
    """The whole answer of a turn, when it is not streamed."""

    answer: str
    completed: bool = Field(description="false when the turn stopped before the answer's end")
    references: list[Reference]
    entities: list[str]
    timings_ms: dict[str, float]
    usage: ChatUsage | None
    error: ErrorEvent | None


class AgentChatAnswer(ChatAnswer):
    """The agent's whole answer, with the steps that led to it."""

    steps: list[AgentStep]
