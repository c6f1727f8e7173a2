"""Pick the graph store from the global switch."""

from __future__ import annotations

from graphrag.graph.store import DisabledGraphStore, GraphStore
from graphrag.settings import Settings

__all__ = ["build_graph_store"]


def build_graph_store(settings: Settings) -> GraphStore:
    """The Neo4j store when NEO4J_ENABLE is "true", else the logged no-op store."""
    if not settings.neo4j.enable:
        return DisabledGraphStore()
    from graphrag.graph.neo4j_client import connect_driver
    from graphrag.graph.neo4j_store import Neo4jGraphStore

    return Neo4jGraphStore(connect_driver(settings.neo4j), settings.neo4j)
