"""Graph removals that outlive a graph switched off: owed to Neo4j, paid once it is back.

With `NEO4J_ENABLE` off the graph store is a no-op, yet Neo4j may still hold what a document or
base wrote while it was on. Removing such a document or base records the removal in PostgreSQL;
the reconciler pays the list when the graph is on again, so no node outlives its document.
"""

from __future__ import annotations

import logging
import uuid

from sqlalchemy import delete, select

from graphrag.db.engine import session_scope
from graphrag.db.models import GraphPurge, Knowledge
from graphrag.db.outbox import enqueue, resolve_entities
from graphrag.errors import GraphStoreError
from graphrag.ingest.context import IngestContext

__all__ = ["drain_graph_purges", "remove_document_graph", "remove_kb_graph"]

log = logging.getLogger(__name__)


def _owe(
    ctx: IngestContext, kb_id: uuid.UUID, knowledge_id: uuid.UUID | None, attempt: int | None
) -> None:
    with session_scope(ctx.sessions) as session:
        session.add(GraphPurge(kb_id=kb_id, knowledge_id=knowledge_id, attempt=attempt))
    log.info("graph off: removal of %s recorded for later", knowledge_id or kb_id)


def _delete_document_nodes(
    ctx: IngestContext, kb_id: uuid.UUID, knowledge_id: uuid.UUID, *, gone: bool
) -> int:
    """The document's nodes removed, with its contribution to entity resolution: links of other
    documents' nodes that only it justified are withdrawn (those documents resolve again), and
    resolved entities left without a member go; `gone` (not a re-parse): its pins go too."""
    resolution = ctx.resolution
    withdrawal = resolution.withdraw_document(knowledge_id) if resolution is not None else None
    removed = ctx.graph.delete_document(kb_id, knowledge_id)
    if resolution is not None and withdrawal is not None:
        resolution.remove_orphans(withdrawal.resolved)
        if gone:
            resolution.forget_document(kb_id, knowledge_id)
        if withdrawal.documents:
            with session_scope(ctx.sessions) as session:
                enqueue(session, *(resolve_entities(doc) for doc in withdrawal.documents))
    return removed


def remove_document_graph(
    ctx: IngestContext, kb_id: uuid.UUID, knowledge_id: uuid.UUID, attempt: int | None = None
) -> int:
    """Remove every attempt's nodes of a document now, or owe it while the graph is off.

    `attempt` is the attempt about to be processed (a re-parse); None when the document goes.
    """
    if ctx.graph.enabled:
        return _delete_document_nodes(ctx, kb_id, knowledge_id, gone=attempt is None)
    _owe(ctx, kb_id, knowledge_id, attempt)
    return 0


def remove_kb_graph(ctx: IngestContext, kb_id: uuid.UUID) -> int:
    """Remove a base's whole graph now, or owe it while the graph is off."""
    if ctx.graph.enabled:
        if ctx.resolution is not None:
            ctx.resolution.delete_knowledge_base(kb_id)
        return ctx.graph.delete_knowledge_base(kb_id)
    _owe(ctx, kb_id, None, None)
    return 0


def _still_owed(ctx: IngestContext, purge: GraphPurge) -> bool:
    """A re-parse's removal is void once a later attempt started: that one removed (or owed)."""
    if purge.knowledge_id is None or purge.attempt is None:
        return True
    with session_scope(ctx.sessions) as session:
        current = session.execute(
            select(Knowledge.attempt).where(Knowledge.id == purge.knowledge_id)
        ).scalar_one_or_none()
    return current is None or current == purge.attempt


def drain_graph_purges(ctx: IngestContext) -> list[uuid.UUID]:
    """Pay the owed removals while the graph is on; the ids of the purges done (or voided)."""
    if not ctx.graph.enabled:
        return []
    with session_scope(ctx.sessions) as session:
        owed = list(session.execute(select(GraphPurge).order_by(GraphPurge.created_at)).scalars())
        session.expunge_all()
    done: list[uuid.UUID] = []
    for purge in owed:
        try:
            if _still_owed(ctx, purge):
                if purge.knowledge_id is None:
                    remove_kb_graph(ctx, purge.kb_id)
                else:
                    gone = purge.attempt is None
                    _delete_document_nodes(ctx, purge.kb_id, purge.knowledge_id, gone=gone)
        except GraphStoreError as exc:
            log.warning("owed graph removals wait for Neo4j: %s", exc.message)
            break
        with session_scope(ctx.sessions) as session:
            session.execute(delete(GraphPurge).where(GraphPurge.id == purge.id))
        done.append(purge.id)
    return done
