"""The state of one chat turn as it moves through the pipeline, and what the stages use."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Protocol

from sqlalchemy.orm import Session, sessionmaker

from graphrag.chat.schemas import AgentStep, ChatRequest, ChatUsage, ErrorEvent, Reference
from graphrag.errors import GraphragError
from graphrag.graph.store import GraphStore
from graphrag.llm.client import LlmClient, TokenUsage
from graphrag.llm.messages import ChatMessage
from graphrag.search.embeddings import Embedder
from graphrag.search.models import KbScope, SearchHit
from graphrag.search.passages import Passage
from graphrag.settings import Settings

__all__ = ["ChatServices", "ChatTurn", "MemoryPort", "TurnUsage"]


class MemoryPort(Protocol):
    """The agent memory as the chat sees it: recall before answering, record after."""

    def recall(self, tenant_id: uuid.UUID, owner: str, query: str) -> str:
        """Core memory and the facts recalled for `query` (counted as accessed)."""
        ...

    def core(self, tenant_id: uuid.UUID, owner: str) -> str:
        """Core memory alone, read without touching any fact's access count."""
        ...

    def fit_history(
        self,
        tenant_id: uuid.UUID,
        owner: str,
        session_id: uuid.UUID,
        history: list[ChatMessage],
        reserve_chars: int = 0,
    ) -> tuple[str | None, list[ChatMessage]]:
        """The conversation within the context budget less `reserve_chars` (what the rest of
        the prompt takes): a summary of what was folded (or None) and the messages kept."""
        ...

    def record_exchange(
        self,
        session: Session,
        tenant_id: uuid.UUID,
        owner: str,
        session_id: uuid.UUID,
        user_text: str,
        assistant_text: str,
        entities: list[str],
    ) -> None: ...

    def forget_session(self, tenant_id: uuid.UUID, session_id: uuid.UUID) -> int:
        """Remove what the memory learnt from a session that is being deleted."""
        ...


@dataclass
class TurnUsage:
    """Tokens of a turn's LLM calls, summed from what the server reported for each."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_calls: int = 0
    reported_calls: int = 0  # calls whose server sent its counts

    def add(self, usage: TokenUsage) -> None:
        """One call's counts (a count of None: the server did not report it)."""
        self.llm_calls += 1
        if not usage.reported:
            return
        self.reported_calls += 1
        self.prompt_tokens += usage.prompt_tokens or 0
        self.completion_tokens += usage.completion_tokens or 0

    def public(self) -> ChatUsage | None:
        """The sums as the `done` event and the JSON answer carry them; None if none reported."""
        if not self.reported_calls:
            return None
        return ChatUsage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            total_tokens=self.prompt_tokens + self.completion_tokens,
            llm_calls=self.llm_calls,
        )


@dataclass(frozen=True)
class ChatServices:
    settings: Settings
    sessions: sessionmaker[Session]
    embedder: Embedder
    llm: LlmClient
    graph: GraphStore
    memory: MemoryPort | None = None


@dataclass
class ChatTurn:
    """Filled stage by stage; each stage reads what earlier ones wrote."""

    tenant_id: uuid.UUID
    session_id: uuid.UUID | None  # None: a stateless turn, whose caller sends the history
    owner: str
    request: ChatRequest
    scopes: list[KbScope]
    history: list[ChatMessage] = field(default_factory=list)
    loaded_history: list[ChatMessage] = field(default_factory=list)  # before it was fitted
    instructions: str = ""  # the caller's own system text, after ours
    history_summary: str | None = None
    memory_context: str = ""
    retrieval_query: str = ""
    sub_questions: list[str] = field(default_factory=list)  # empty: the question is one part
    entities: list[str] = field(default_factory=list)
    chunk_hits: list[SearchHit] = field(default_factory=list)
    hits: list[SearchHit] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    messages: list[ChatMessage] = field(default_factory=list)
    steps: list[AgentStep] = field(default_factory=list)  # how an agent reached its answer
    answer: str = ""
    completed: bool = False
    failure: GraphragError | None = None  # what stopped the turn, if anything did
    graph_truncated: bool = False
    usage: TurnUsage = field(default_factory=TurnUsage)
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def error(self) -> ErrorEvent | None:
        """The `error` event of what stopped the turn (None while nothing did)."""
        return None if self.failure is None else ErrorEvent.of(self.failure)

    @property
    def graph_kb_ids(self) -> list[uuid.UUID]:
        """Bases in scope whose graph is on, when the request wants the graph."""
        if not self.request.use_graph:
            return []
        return [s.kb_id for s in self.scopes if s.graph_on]
