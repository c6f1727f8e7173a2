"""The periodic sweep that keeps documents from staying stuck: the backstop behind the outbox.

Lost tasks are found within the visibility timeout by the outbox relay (`outbox/relay.py`);
this sweep only covers what has no live row to watch (a row given up or removed by hand, a
document from before the outbox). Work is re-armed in the outbox in the same transaction that
reads the stuck documents, never redone here: the tasks are idempotent, so a document whose
task is in fact still running only sees a duplicate that finds nothing left to do.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel
from sqlalchemy import Row, func, select, update

from graphrag.db.engine import session_scope
from graphrag.db.enums import GraphStatus, KnowledgeBaseStatus, ParseStatus
from graphrag.db.models import Chunk, Knowledge, KnowledgeBase
from graphrag.db.outbox import (
    TaskRequest,
    delete_document,
    delete_knowledge_base,
    enqueue,
    extract_chunk,
    process_document,
)
from graphrag.ingest.context import IngestContext
from graphrag.ingest.graph.purges import drain_graph_purges
from graphrag.ingest.poison import give_up_stuck

__all__ = ["ReconcileReport", "reconcile"]

log = logging.getLogger(__name__)


class ReconcileReport(BaseModel):
    failed: list[uuid.UUID] = []  # stuck after `max_requeues` re-enqueues: given up
    reprocessed: list[uuid.UUID] = []
    re_extracted: list[uuid.UUID] = []
    purged_documents: list[uuid.UUID] = []
    purged_knowledge_bases: list[uuid.UUID] = []
    graph_purges: list[uuid.UUID] = []  # removals owed while the graph was off, now done


def reconcile(ctx: IngestContext, stuck_after_s: int | None = None) -> ReconcileReport:
    """Re-arm the tasks of documents whose status has not moved for `stuck_after_s` (settings
    default), and of bases left `deleting`."""
    threshold = ctx.settings.ingest.stuck_after_s if stuck_after_s is None else stuck_after_s
    cutoff = datetime.now(UTC) - timedelta(seconds=threshold)
    report = ReconcileReport()
    with session_scope(ctx.sessions) as session:
        stuck = session.execute(
            select(Knowledge.id, Knowledge.attempt, Knowledge.parse_status)
            .where(
                Knowledge.parse_status.in_([*ParseStatus.working(), ParseStatus.DELETING]),
                Knowledge.status_changed_at <= cutoff,
            )
            .with_for_update(skip_locked=True)
        ).all()
        report.failed = give_up_stuck(session, stuck, ctx.settings.ingest.max_requeues)
        stuck = [row for row in stuck if row[0] not in report.failed]
        finalizing = [doc_id for doc_id, _, status in stuck if status == ParseStatus.FINALIZING]
        pending_chunks: dict[uuid.UUID, list[uuid.UUID]] = {doc_id: [] for doc_id in finalizing}
        if finalizing:
            rows = session.execute(
                select(Chunk.knowledge_id, Chunk.id)
                .where(
                    Chunk.knowledge_id.in_(finalizing),
                    Chunk.graph_status == GraphStatus.PENDING,
                )
                .order_by(Chunk.knowledge_id, Chunk.seq)
            )
            for doc_id, chunk_id in rows:
                pending_chunks[doc_id].append(chunk_id)
        session.execute(
            update(Knowledge)
            .where(Knowledge.id.in_([row[0] for row in stuck]))
            .values(status_changed_at=func.now())
        )
        dead_kbs = list(
            session.execute(
                select(KnowledgeBase.id).where(KnowledgeBase.status == KnowledgeBaseStatus.DELETING)
            ).scalars()
        )
        requests = _requests(stuck, pending_chunks, dead_kbs, report)
        enqueue(session, *requests, rearm=True)
    report.graph_purges = drain_graph_purges(ctx)
    if requests or report.failed:
        log.warning("reconciler re-armed work: %s", report.model_dump_json())
    return report


def _requests(
    stuck: Sequence[Row[uuid.UUID, int, ParseStatus]],
    pending_chunks: dict[uuid.UUID, list[uuid.UUID]],
    dead_kbs: list[uuid.UUID],
    report: ReconcileReport,
) -> list[TaskRequest]:
    requests: list[TaskRequest] = []
    for doc_id, attempt, status in stuck:
        if status == ParseStatus.DELETING:
            requests.append(delete_document(doc_id))
            report.purged_documents.append(doc_id)
        elif status == ParseStatus.FINALIZING:
            requests += [extract_chunk(doc_id, attempt, c) for c in pending_chunks[doc_id]]
            report.re_extracted.append(doc_id)
        else:
            requests.append(process_document(doc_id, attempt))
            report.reprocessed.append(doc_id)
    for kb_id in dead_kbs:
        requests.append(delete_knowledge_base(kb_id))
        report.purged_knowledge_bases.append(kb_id)
    return requests
