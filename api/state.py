"""What the lifespan opens once per API process and the dependencies hand to routes."""

from __future__ import annotations

from dataclasses import dataclass

import redis
from neo4j import Driver
from prometheus_client import CollectorRegistry
from sqlalchemy import Engine
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
from graphrag.search.embeddings import Embedder
from graphrag.settings import Settings

__all__ = ["AppState"]


@dataclass
class AppState:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    redis: redis.Redis[bytes]
    neo4j: Driver | None
    graph: GraphStore
    storage: FileStorage
    relay: RelayLoop  # kicked after a commit that wrote outbox rows
    embedder: Embedder
    llm: LlmClient  # interactive calls (chat, previews): the interactive slots
    rate_limiter: RateLimiter  # requests per API key, checked after authentication
    failed_auth: FailedAuthLimiter  # bad keys per client address, checked before authentication
    metrics: CollectorRegistry  # series read at scrape time (queue depths), beside the default
    memory: MemoryContext  # built once by `open_memory_context`
    url_imports: UrlImportGate  # URL fetches at once and their threads, in this process
    chat_gate: ChatGate  # chat-like requests at once per key, and the threads they run on

    def memory_context(self) -> MemoryContext:
        """The agent memory over this process's services. Without Neo4j it has no archive
        (`archival` is False): core and recall memory, in PostgreSQL, still work."""
        return self.memory

    def chat_services(self, memory: MemoryPort | None = None) -> ChatServices:
        """The chat over this process's services; `memory` for a chat that keeps a conversation."""
        return ChatServices(
            settings=self.settings,
            sessions=self.sessions,
            embedder=self.embedder,
            llm=self.llm,
            graph=self.graph,
            memory=memory,
        )

    def face_services(self) -> FaceServices:
        """What the OpenAI-compatible and MCP faces use (they keep no conversation)."""
        return FaceServices(chat=self.chat_services(), storage=self.storage, relay=self.relay)
