"""What the memory's operations need, built once per process (API lifespan, worker)."""

from __future__ import annotations

from dataclasses import dataclass

from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from graphrag.llm.client import LlmClient
from graphrag.memory.archive import MemoryArchive
from graphrag.memory.clock import Clock, system_clock
from graphrag.memory.entity_graph import MemoryEntityGraph
from graphrag.memory.graph_io import MemoryGraphIO
from graphrag.memory.schema import ensure_memory_schema
from graphrag.search.embeddings import Embedder
from graphrag.settings import ExtractionSettings, MemorySettings, Settings

__all__ = ["MemoryContext", "open_memory_context"]


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


def open_memory_context(
    settings: Settings,
    sessions: sessionmaker[Session],
    driver: Driver | None,
    embedder: Embedder,
    llm: LlmClient | None = None,
) -> MemoryContext | None:
    """The memory over one process's services, its Neo4j schema ensured: the API's lifespan and
    a memory worker both build theirs here, once. None without Neo4j (the archive lives there).
    """
    if driver is None:
        return None
    io = MemoryGraphIO(driver, settings.neo4j)
    ensure_memory_schema(io, settings.embedding.dim)
    return MemoryContext(
        settings=settings.memory,
        extraction=settings.extraction,
        sessions=sessions,
        io=io,
        embedder=embedder,
        llm=llm,
    )
