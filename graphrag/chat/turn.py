"""The state of one chat turn as it moves through the pipeline, and what the stages use."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Protocol

from sqlalchemy.orm import Session, sessionmaker

from graphrag.chat.schemas import ChatRequest, Reference
from graphrag.graph.store import GraphStore
from graphrag.llm.client import LlmClient, TokenUsage
from graphrag.llm.prompts import ChatMessage
from graphrag.search.embeddings import Embedder
from graphrag.search.models import KbScope, SearchHit
from graphrag.search.passages import Passage
from graphrag.settings import Settings

__all__ = ["ChatServices", "ChatTurn", "MemoryPort"]


class MemoryPort(Protocol):
    """The agent memory as the chat sees it: recall before answering, record after."""

    def recall(self, tenant_id: uuid.UUID, owner: str, query: str) -> str: ...

    def fit_history(
        self, tenant_id: uuid.UUID, owner: str, session_id: uuid.UUID, history: list[ChatMessage]
    ) -> tuple[str | None, list[ChatMessage]]:
        """The conversation within the context budget: a summary of what was folded (or None)
        and the messages kept."""
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
    instructions: str = ""  # the caller's own system text, after ours
    history_summary: str | None = None
    memory_context: str = ""
    retrieval_query: str = ""
    entities: list[str] = field(default_factory=list)
    chunk_hits: list[SearchHit] = field(default_factory=list)
    hits: list[SearchHit] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    messages: list[ChatMessage] = field(default_factory=list)
    answer: str = ""
    completed: bool = False
    graph_truncated: bool = False
    usage: TokenUsage = field(default_factory=TokenUsage)
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def graph_kb_ids(self) -> list[uuid.UUID]:
        """Bases in scope whose graph is on, when the request wants the graph."""
        if not self.request.use_graph:
            return []
        return [s.kb_id for s in self.scopes if s.graph_on]
