"""What background ingestion work needs, built once per worker process."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from graphrag.graph.resolution.store import Neo4jResolutionStore
from graphrag.graph.store import GraphStore
from graphrag.ingest.storage import FileStorage
from graphrag.search.embeddings import Embedder
from graphrag.settings import Settings

__all__ = ["IngestContext"]


@dataclass(frozen=True)
class IngestContext:
    settings: Settings
    sessions: sessionmaker[Session]
    storage: FileStorage
    embedder: Embedder
    graph: GraphStore
    resolution: Neo4jResolutionStore | None = None  # None: no entity resolution (graph off)
