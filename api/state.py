"""What the lifespan opens once per API process and the dependencies hand to routes."""

from __future__ import annotations

from dataclasses import dataclass

import redis
from prometheus_client import CollectorRegistry
from sqlalchemy.orm import Session, sessionmaker

from api.chat_gate import ChatGate
from graphrag.auth.rate_limit import FailedAuthLimiter, RateLimiter
from graphrag.chat.turn import ChatServices, MemoryPort
from graphrag.faces.services import FaceServices
from graphrag.graph.store import GraphStore
from graphrag.ingest.storage import FileStorage
from graphrag.ingest.url.gate import UrlImportGate
from graphrag.llm.client import LlmClient
from graphrag.memory.context import MemoryContext
from graphrag.outbox.relay_loop import RelayLoop
from graphrag.services import Services
from graphrag.settings import Settings

__all__ = ["AppState"]


@dataclass
class AppState:
    """The process's services (opened by `graphrag.services.open_services`) and what only the
    API adds over them."""

    services: Services
    rate_limiter: RateLimiter  # requests per API key, checked after authentication
    failed_auth: FailedAuthLimiter  # bad keys per client address, checked before authentication
    metrics: CollectorRegistry  # series read at scrape time (queue depths), beside the default
    url_imports: UrlImportGate  # URL fetches at once and their threads, in this process
    chat_gate: ChatGate  # chat-like requests at once per key, and the threads they run on

    @property
    def settings(self) -> Settings:
        return self.services.settings

    @property
    def sessions(self) -> sessionmaker[Session]:
        return self.services.sessions

    @property
    def redis(self) -> redis.Redis[bytes]:
        return self.services.redis

    @property
    def graph(self) -> GraphStore:
        return self.services.graph

    @property
    def storage(self) -> FileStorage:
        return self.services.storage

    @property
    def relay(self) -> RelayLoop:
        """Kicked after a commit that wrote outbox rows."""
        return self.services.relay

    @property
    def llm(self) -> LlmClient:
        """Interactive calls (chat, previews): the interactive slots."""
        return self.services.llm

    def memory_context(self) -> MemoryContext:
        """The agent memory over this process's services. Without Neo4j it has no archive
        (`archival` is False): core and recall memory, in PostgreSQL, still work."""
        return self.services.memory()

    def chat_services(self, memory: MemoryPort | None = None) -> ChatServices:
        """The chat over this process's services; `memory` for a chat that keeps a conversation."""
        return self.services.chat(memory)

    def face_services(self) -> FaceServices:
        """What the OpenAI-compatible and MCP faces use (they keep no conversation)."""
        return self.services.faces()
