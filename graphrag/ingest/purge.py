"""Deleting documents and knowledge bases for good: graph first, then files, then rows.

Each purge starts from a row already marked `deleting` and removes that row last, so a purge
cut short by a crash or an error is simply run again (the outbox re-sends a failed task, the
reconciler a lost one) and finishes the job. Rows go in committed batches of
`ingest.purge_batch_rows` (`db.batched_delete`): a large base never needs one statement longer
than the statement timeout, and each run continues from the rows the last one left.
"""

from __future__ import annotations

import logging
import uuid

from sqlalchemy import Delete, delete

from graphrag.db.batched_delete import delete_in_batches
from graphrag.db.engine import session_scope
from graphrag.db.enums import KnowledgeBaseStatus, ParseStatus
from graphrag.db.models import Chunk, Knowledge, KnowledgeBase, core_table
from graphrag.db.outbox import TaskLease
from graphrag.ingest.context import IngestContext
from graphrag.ingest.graph.purges import remove_document_graph, remove_kb_graph

__all__ = ["purge_document", "purge_knowledge_base"]

log = logging.getLogger(__name__)

_CHUNKS = core_table(Chunk)
_DOCUMENTS = core_table(Knowledge)


def purge_document(ctx: IngestContext, knowledge_id: uuid.UUID, lease: TaskLease) -> bool:
    """Remove a `deleting` document's graph, chunks, file and row. False if nothing to purge.
    `lease` (the task's row) is renewed by the first read and settled with the row's delete."""
    with session_scope(ctx.sessions) as session:
        doc = session.get(Knowledge, knowledge_id)
        if doc is None or doc.parse_status != ParseStatus.DELETING:
            lease.settle(session)
            return False
        kb_id = doc.kb_id
        lease.renew(session)
    removed = remove_document_graph(ctx, kb_id, knowledge_id)
    ctx.storage.delete_document(kb_id, knowledge_id)
    batch = ctx.settings.ingest.purge_batch_rows
    chunks = delete_in_batches(ctx.sessions, _CHUNKS, _CHUNKS.c.knowledge_id == knowledge_id, batch)
    gone = (Knowledge.id == knowledge_id, Knowledge.parse_status == ParseStatus.DELETING)
    _delete_last(ctx, delete(Knowledge).where(*gone), lease)
    log.info("document %s purged (%d chunks, %d graph nodes)", knowledge_id, chunks, removed)
    return True


def purge_knowledge_base(ctx: IngestContext, kb_id: uuid.UUID, lease: TaskLease) -> bool:
    """Remove a `deleting` base with its whole graph, every document, chunk and file; `lease`
    as for `purge_document`."""
    with session_scope(ctx.sessions) as session:
        kb = session.get(KnowledgeBase, kb_id)
        if kb is None or kb.status != KnowledgeBaseStatus.DELETING:
            lease.settle(session)
            return False
        lease.renew(session)
    removed = remove_kb_graph(ctx, kb_id)
    ctx.storage.delete_kb(kb_id)
    batch = ctx.settings.ingest.purge_batch_rows
    chunks = delete_in_batches(ctx.sessions, _CHUNKS, _CHUNKS.c.kb_id == kb_id, batch)
    documents = delete_in_batches(ctx.sessions, _DOCUMENTS, _DOCUMENTS.c.kb_id == kb_id, batch)
    gone = (KnowledgeBase.id == kb_id, KnowledgeBase.status == KnowledgeBaseStatus.DELETING)
    _delete_last(ctx, delete(KnowledgeBase).where(*gone), lease)
    log.info(
        "knowledge base %s purged (%d documents, %d chunks, %d graph nodes)",
        kb_id,
        documents,
        chunks,
        removed,
    )
    return True


def _delete_last(ctx: IngestContext, row_delete: Delete, lease: TaskLease) -> None:
    """The purged row goes with its task's outbox row, in one transaction."""
    with session_scope(ctx.sessions) as session:
        session.execute(row_delete)
        lease.settle(session)
