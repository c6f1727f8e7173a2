"""The memory's Neo4j schema: the cosine vector index, uniqueness, owner lookups and the
entities' full-text index (name and description)."""

from __future__ import annotations

from graphrag.memory import cypher
from graphrag.memory.graph_io import MemoryGraphIO

__all__ = ["ensure_memory_schema"]


def ensure_memory_schema(io: MemoryGraphIO, dimensions: int) -> None:
    """Create (IF NOT EXISTS) the vector index of `dimensions`, the constraints and indexes.

    The vector width must be the embedder's: a vector of another width is not indexed.
    """
    io.schema(cypher.MEMORY_ID_UNIQUE, {})
    io.schema(cypher.MEMORY_OWNER_INDEX, {})
    io.schema(cypher.MEMORY_ENTITY_KEY, {})
    io.schema(cypher.MEMORY_ENTITY_TEXT_INDEX, {})
    io.schema(cypher.MEMORY_VECTOR_INDEX, {"dimensions": dimensions})
