"""The resolution task's work: a completed document's entities resolved against its base.

Queued by the settlement that completes a document (in its transaction), and again for the
documents whose links a deleted or re-parsed document withdrew. A document gone, or being
processed again meanwhile, ends the task with nothing done: its next completion queues another.

The runs of one base take turns (a transaction-scoped PostgreSQL advisory lock on the base):
two documents completed at the same moment would otherwise each miss the other's entities.
"""

from __future__ import annotations

import logging
import uuid

from sqlalchemy import func, select

from graphrag.db.engine import session_scope
from graphrag.db.enums import ParseStatus
from graphrag.db.models import Knowledge
from graphrag.db.outbox import TaskLease
from graphrag.graph.resolution.resolver import ResolutionReport, resolve_document
from graphrag.ingest.graph.chunk_extraction import GraphContext

__all__ = ["resolve_document_entities"]

log = logging.getLogger(__name__)

# The advisory lock space of resolution runs (the two-key form: this class, then the base).
_RESOLUTION_LOCKS = 0x7265736F


def _base_lock(kb_id: uuid.UUID) -> int:
    """A signed 32-bit key of the base (a shared key between two bases only costs a wait)."""
    return (kb_id.int & 0xFFFFFFFF) - (1 << 31)


def resolve_document_entities(
    ctx: GraphContext, knowledge_id: uuid.UUID, lease: TaskLease
) -> ResolutionReport | None:
    """Resolve the document's unresolved entities; None when there was nothing to do."""
    with session_scope(ctx.sessions) as session:
        lease.renew(session)
        row = session.execute(
            select(Knowledge.kb_id, Knowledge.parse_status).where(Knowledge.id == knowledge_id)
        ).first()
    report = None
    with session_scope(ctx.sessions) as session:
        if (
            ctx.resolution is not None
            and row is not None
            and row.parse_status is ParseStatus.COMPLETED
        ):
            session.execute(
                select(func.pg_advisory_xact_lock(_RESOLUTION_LOCKS, _base_lock(row.kb_id)))
            )
            report = resolve_document(
                ctx.resolution,
                ctx.llm,
                ctx.settings.resolution,
                row.kb_id,
                knowledge_id,
                ctx.settings.extraction.prompt_templates_dir,
            )
        lease.settle(session)
    return report
