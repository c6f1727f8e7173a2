"""A base's entity resolution as its routes reach it: the caller's base, with the graph on."""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from graphrag.errors import GraphDisabledError
from graphrag.graph.resolution.store import Neo4jResolutionStore
from graphrag.kb.service import get_kb_row

__all__ = ["resolution_of"]


def resolution_of(
    session: Session,
    store: Neo4jResolutionStore | None,
    tenant_id: uuid.UUID,
    kb_id: uuid.UUID,
) -> Neo4jResolutionStore:
    """The resolution store for this tenant's base: 404 for another tenant's or a missing base,
    503 `graph_disabled` when the server runs without Neo4j."""
    get_kb_row(session, tenant_id, kb_id)
    if store is None:
        raise GraphDisabledError("the knowledge graph is not enabled on this server")
    return store
