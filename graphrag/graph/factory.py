"""Pick the graph store from the global switch."""

from __future__ import annotations

from neo4j import Driver

from graphrag.graph.store import DisabledGraphStore, GraphStore
from graphrag.settings import Settings

__all__ = ["build_graph_store"]


def build_graph_store(settings: Settings, driver: Driver | None = None) -> GraphStore:
    """The Neo4j store (its schema ensured) when NEO4J_ENABLE is "true", else the no-op store.

    `driver` is the process's driver when the caller already has one; otherwise one is opened.
    """
    if not settings.neo4j.enable:
        return DisabledGraphStore()
    from graphrag.graph.neo4j_client import connect_driver
    from graphrag.graph.neo4j_store import Neo4jGraphStore

    store = Neo4jGraphStore(driver or connect_driver(settings.neo4j), settings.neo4j)
    store.ensure_schema()
    store.ensure_vector_index(settings.embedding.dim)
    return store
