"""What a base's graph switch does to the documents it already holds.

Turned on: every completed document of the base gets its selected chunks extracted, as if it
had just been indexed with the graph on: the chunks go `pending`, the document `finalizing`
with one `graph.extract_chunk` task per chunk in the outbox (same transaction), and its `graph`
stage counts them down. Chunks whose graph is already `done` (the switch was on before) are not
extracted again.
Turned off: extraction still owed stops. Pending chunks are `skipped` with the reason, the
documents are `completed` at once and their unsent tasks are dropped; a task already running
finds its document no longer `finalizing` and writes nothing.

Both run in the transaction of the base's update, which holds the base's row lock: a document
being indexed meanwhile reads the switch under a share lock of that row when it writes its
chunks (`processing._write`), so it sees the committed value and is never missed.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.orm import Session

from graphrag.db import lifecycle
from graphrag.db.enums import GraphStatus, OutboxStatus, ParseStatus, Stage, StageStatus
from graphrag.db.models import Chunk, Knowledge, OutboxTask
from graphrag.db.outbox import TaskName
from graphrag.graph.store import GraphStore
from graphrag.ingest.graph.plan import GraphCandidate, plan_graph
from graphrag.ingest.schemas import StageProgress
from graphrag.kb import service as kb_service
from graphrag.kb.schemas import KnowledgeBasePublic, KnowledgeBaseUpdate
from graphrag.settings import Settings

__all__ = [
    "GRAPH_TURNED_OFF",
    "GraphSwitchOutcome",
    "start_graph_for_base",
    "stop_graph_for_base",
    "update_base",
]

GRAPH_TURNED_OFF = "the knowledge base's graph was turned off"

# A document's chunks of its current attempt, as the graph plan reads them, in document order.
_CANDIDATES = (
    select(
        Chunk.id,
        Chunk.seq,
        Chunk.chunk_type,
        Chunk.content,
        Chunk.parent_chunk_id,
        Chunk.graph_status,
    )
    .where(Chunk.knowledge_id == bindparam("p_id"), Chunk.attempt == bindparam("p_attempt"))
    .order_by(Chunk.seq)
)


@dataclass(frozen=True)
class GraphSwitchOutcome:
    """What an update of a base did: its public view and the graph tasks it queued."""

    base: KnowledgeBasePublic
    tasks_queued: int


def update_base(
    session: Session,
    settings: Settings,
    graph: GraphStore,
    tenant_id: uuid.UUID,
    kb_id: uuid.UUID,
    data: KnowledgeBaseUpdate,
) -> GraphSwitchOutcome:
    """Change a base (`kb.service.update_kb`) under its row lock, and what its graph switch
    calls for in the same transaction: switched on, the base's graph indexes and the
    extraction of its completed documents; switched off, the extraction still owed stops."""
    row = kb_service.get_kb_row(session, tenant_id, kb_id, for_update=True)
    was_on = kb_service.kb_graph_on(settings, row)
    kb_service.update_kb(session, settings, row, data)
    now_on = kb_service.kb_graph_on(settings, row)
    queued = 0
    if now_on and not was_on:
        graph.ensure_kb_indexes(row.id)
        queued = start_graph_for_base(session, settings, row.id)
    elif was_on and not now_on:
        stop_graph_for_base(session, row.id)
    return GraphSwitchOutcome(base=kb_service.to_public(settings, row), tasks_queued=queued)


def start_graph_for_base(session: Session, settings: Settings, kb_id: uuid.UUID) -> int:
    """Queue the extraction of every completed document of the base; the tasks queued."""
    docs = (
        session.execute(
            select(Knowledge)
            .where(Knowledge.kb_id == kb_id, Knowledge.parse_status == ParseStatus.COMPLETED)
            .order_by(Knowledge.created_at, Knowledge.id)
            .with_for_update()
        )
        .scalars()
        .all()
    )
    return sum(_start_document(session, doc, settings.ingest.graph_max_chunks) for doc in docs)


def _start_document(session: Session, doc: Knowledge, cap: int) -> int:
    rows = session.execute(_CANDIDATES, {"p_id": doc.id, "p_attempt": doc.attempt})
    plan = plan_graph([GraphCandidate(*row) for row in rows], cap)
    if plan.over_budget:
        session.execute(
            update(Chunk)
            .where(Chunk.id.in_(plan.over_budget))
            .values(graph_error=plan.reason)
            .execution_options(synchronize_session=False)
        )
    if not plan.extract:
        return 0
    session.execute(
        update(Chunk)
        .where(Chunk.id.in_(plan.extract))
        .values(graph_status=GraphStatus.PENDING, graph_error=None)
        .execution_options(synchronize_session=False)
    )
    stages = {Stage.GRAPH: plan.stage.stored()}
    lifecycle.start_graph(session, doc.id, doc.attempt, plan.extract, plan.retried_failures, stages)
    return len(plan.extract)


def stop_graph_for_base(session: Session, kb_id: uuid.UUID) -> int:
    """Skip the chunks still waiting for extraction in the base; the documents settled.

    The chunks are settled before their documents are locked: a chunk task settling at the same
    time takes its chunk, then its document, and the same order here cannot deadlock with it.
    """
    where = (Knowledge.kb_id == kb_id, Knowledge.parse_status == ParseStatus.FINALIZING)
    finalizing = select(Knowledge.id).where(*where)
    session.execute(
        update(Chunk)
        .where(
            Chunk.knowledge_id.in_(finalizing),
            Chunk.graph_status == GraphStatus.PENDING,
        )
        .values(graph_status=GraphStatus.SKIPPED, graph_error=GRAPH_TURNED_OFF)
        .execution_options(synchronize_session=False)
    )
    owed = Knowledge.pending_subtasks_count
    columns = (Knowledge.id, Knowledge.attempt, Knowledge.progress, owed)
    docs = session.execute(select(*columns).where(*where).with_for_update()).all()
    for doc_id, attempt, progress, unsettled in docs:
        stages = {Stage.GRAPH: _stopped_stage(progress, unsettled).stored()}
        lifecycle.stop_graph(session, doc_id, attempt, stages)
    if docs:
        session.execute(
            delete(OutboxTask)
            .where(
                OutboxTask.task_name == TaskName.EXTRACT_CHUNK.value,
                OutboxTask.knowledge_id.in_([row.id for row in docs]),
                OutboxTask.status == OutboxStatus.PENDING,
            )
            .execution_options(synchronize_session=False)
        )
    return len(docs)


def _stopped_stage(progress: dict[str, Any], unsettled: int) -> StageProgress:
    """The graph stage of a document whose `unsettled` chunks will not be extracted."""
    stage = StageProgress.model_validate(progress.get(Stage.GRAPH) or {})
    return stage.model_copy(
        update={
            "status": StageStatus.CANCELLED,
            "done": max(stage.total - unsettled, 0),
            "skipped": stage.skipped + unsettled,
            "detail": GRAPH_TURNED_OFF,
        }
    )
