"""What the lifespan opens once per API process and the dependencies hand to routes."""

from __future__ import annotations

from dataclasses import dataclass

import redis
from neo4j import Driver
from prometheus_client import CollectorRegistry
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from graphrag.chat.turn import ChatServices
from graphrag.faces.services import FaceServices
from graphrag.graph.store import GraphStore
from graphrag.ingest.relay_loop import RelayLoop
from graphrag.ingest.storage import FileStorage
from graphrag.llm.client import LlmClient
from graphrag.memory.context import MemoryContext
from graphrag.memory.graph_io import MemoryGraphIO
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
    llm: LlmClient  # interactive calls (chat, previews): no background slot
    metrics: CollectorRegistry  # series read at scrape time (queue depths), beside the default

    def memory_context(self) -> MemoryContext:
        """The agent memory over this process's services. Without Neo4j it has no archive
        (`archival` is False): core and recall memory, in PostgreSQL, still work."""
        io = MemoryGraphIO(self.neo4j, self.settings.neo4j) if self.neo4j is not None else None
        return MemoryContext(
            settings=self.settings.memory,
            extraction=self.settings.extraction,
            sessions=self.sessions,
            io=io,
            embedder=self.embedder,
        )

    def face_services(self) -> FaceServices:
        """What the OpenAI-compatible and MCP faces use (they keep no conversation)."""
        chat = ChatServices(
            settings=self.settings,
            sessions=self.sessions,
            embedder=self.embedder,
            llm=self.llm,
            graph=self.graph,
        )
        return FaceServices(chat=chat, storage=self.storage, relay=self.relay)
