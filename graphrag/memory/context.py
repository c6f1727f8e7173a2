"""What the memory's operations need, built once per process (API lifespan, worker)."""

from __future__ import annotations

from dataclasses import dataclass

from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from graphrag.errors import ArchivalMemoryDisabledError
from graphrag.llm.client import LlmClient
from graphrag.memory.archive import MemoryArchive
from graphrag.memory.clock import Clock, system_clock
from graphrag.memory.entity_graph import MemoryEntityGraph
from graphrag.memory.graph_io import MemoryGraphIO
from graphrag.memory.graph_schema import ensure_memory_schema
from graphrag.search.embeddings import Embedder
from graphrag.settings import ExtractionSettings, MemorySettings, Settings

__all__ = ["ARCHIVAL_OFF", "MemoryContext", "open_memory_context"]

ARCHIVAL_OFF = "the archival memory needs Neo4j (NEO4J_ENABLE=true); core and recall memory work"


@dataclass(frozen=True)
class MemoryContext:
    """Settings, stores, the embedder, the optional LLM and the clock of the memory."""

    settings: MemorySettings
    extraction: ExtractionSettings
    sessions: sessionmaker[Session]
    io: MemoryGraphIO | None  # None: Neo4j is off, no archival facts (core and recall still work)
    embedder: Embedder
    llm: LlmClient | None = None
    clock: Clock = system_clock

    @property
    def archival(self) -> bool:
        """Whether archival facts (Neo4j) are available; core and recall memory always are."""
        return self.io is not None

    def graph_io(self) -> MemoryGraphIO:
        """The Neo4j side of the memory; `ArchivalMemoryDisabledError` when Neo4j is off."""
        if self.io is None:
            raise ArchivalMemoryDisabledError(ARCHIVAL_OFF)
        return self.io

    @property
    def archive(self) -> MemoryArchive:
        """The archival facts; `ArchivalMemoryDisabledError` when Neo4j is off."""
        return MemoryArchive(self.graph_io(), self.settings)

    @property
    def entities(self) -> MemoryEntityGraph:
        """The memory's entity graph; `ArchivalMemoryDisabledError` when Neo4j is off."""
        return MemoryEntityGraph(self.graph_io(), self.settings)


def open_memory_context(
    settings: Settings,
    sessions: sessionmaker[Session],
    driver: Driver | None,
    embedder: Embedder,
    llm: LlmClient | None = None,
) -> MemoryContext:
    """The memory over one process's services, its Neo4j schema ensured: the API's lifespan and
    a memory worker both build theirs here, once. Without Neo4j it has no archive (`archival`
    is False); core and recall memory, in PostgreSQL, still work."""
    io = MemoryGraphIO(driver, settings.neo4j) if driver is not None else None
    if io is not None:
        ensure_memory_schema(io, settings.embedding.dim)
    return MemoryContext(
        settings=settings.memory,
        extraction=settings.extraction,
        sessions=sessions,
        io=io,
        embedder=embedder,
        llm=llm,
    )
