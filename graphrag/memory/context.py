"""What the memory's operations need, built once per process (API lifespan, worker)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from graphrag.llm.client import LlmClient
from graphrag.memory.archive import MemoryArchive
from graphrag.memory.clock import Clock, system_clock
from graphrag.memory.entity_graph import MemoryEntityGraph
from graphrag.memory.graph_io import MemoryGraphIO
from graphrag.search.embeddings import Embedder
from graphrag.settings import ExtractionSettings, MemorySettings

__all__ = ["MemoryContext"]


@dataclass(frozen=True)
class MemoryContext:
    """Settings, stores, the embedder, the optional LLM and the clock of the memory."""

    settings: MemorySettings
    extraction: ExtractionSettings
    sessions: sessionmaker[Session]
    io: MemoryGraphIO
    embedder: Embedder
    llm: LlmClient | None = None
    clock: Clock = system_clock

    @property
    def archive(self) -> MemoryArchive:
        return MemoryArchive(self.io, self.settings)

    @property
    def entities(self) -> MemoryEntityGraph:
        return MemoryEntityGraph(self.io, self.settings)
