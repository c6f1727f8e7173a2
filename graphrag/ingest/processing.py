"""The `document.process` work: parse, chunk, embed, index, then hand the graph its chunks.

Safe to run twice or concurrently for the same attempt: every write happens under the document's
row lock after checking the attempt is current, chunk ids are derived from (document, attempt,
seq), and the chunk rows of the document are replaced as a whole in one transaction.
The task's lease on its outbox row (`TaskLease`, from the worker) is renewed by the claim and
settled by the transaction that ends the work (the write, a failure, or finding the attempt
stale).
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlalchemy import bindparam, delete, insert, select
from sqlalchemy.orm import Session

from graphrag.db.engine import session_scope
from graphrag.db.enums import GraphStatus, Stage, StageStatus
from graphrag.db.lifecycle import (
    claimable_attempt,
    mark_failed,
    settle_indexing,
    start_processing,
)
from graphrag.db.live_attempt import end_run, set_stage
from graphrag.db.models import Chunk, Knowledge, KnowledgeBase, core_table
from graphrag.db.outbox import TaskLease, settled_with, started_with
from graphrag.errors import InvalidInputError, ParseError
from graphrag.graph.vector_checks import VectorUse, searchable, skip_unsearchable
from graphrag.ingest.chunker import chunk_document
from graphrag.ingest.context import IngestContext
from graphrag.ingest.graph.plan import GraphCandidate, GraphPlan, plan_graph
from graphrag.ingest.graph.purges import remove_document_graph
from graphrag.ingest.models import ChunkDraft, FileType, ParsedDocument
from graphrag.ingest.parsers.captioning import build_captioner
from graphrag.ingest.parsers.parse import parse_file
from graphrag.ingest.poison import fail_if_poisoned
from graphrag.ingest.schemas import StageProgress
from graphrag.kb.chunking import ChunkingConfig
from graphrag.kb.schemas import IndexingStrategy
from graphrag.kb.service import stored_graph_on

__all__ = [
    "ProcessOutcome",
    "chunk_id_for",
    "fail_document",
    "process_document",
]

log = logging.getLogger(__name__)

_KNOWLEDGE, _BASES, _CHUNKS = core_table(Knowledge), core_table(KnowledgeBase), core_table(Chunk)
_K, _B = _KNOWLEDGE.c, _BASES.c
# The write's statements, on the tables and built once: the ORM's paths (the bulk insert, the
# whole rows of the document and its base loaded, the unit of work's update) cost more CPU
# than the statements themselves. The status changes are `db.lifecycle`'s, built the same way.
_INSERT_CHUNKS = insert(_CHUNKS)
_DELETE_CHUNKS = delete(_CHUNKS).where(_CHUNKS.c.knowledge_id == bindparam("p_id"))
_GRAPH_SWITCH = (
    select(_B.indexing, _B.extract_config)
    .where(_B.id == bindparam("p_kb"))
    .with_for_update(read=True)
)
# The document while `p_attempt` is its attempt and it may still be claimed.
_CLAIMABLE_ATTEMPT = claimable_attempt()
# The claim: the document locked (not its base) with what the run needs of both, and the task's
# lease renewed by the same statement (bind the lease's parameters).
_LOCK_FOR_CLAIM = started_with(
    select(_K.kb_id, _K.file_type, _K.storage_path, _K.unsettled_runs, _B.chunking, _B.indexing)
    .join_from(_KNOWLEDGE, _BASES, _K.kb_id == _B.id)
    .where(*_CLAIMABLE_ATTEMPT)
    .with_for_update(of=_KNOWLEDGE)
)
# The write's lock of the document, with its own extraction settings (its switch, read after
# the base's), and the task's row deleted by the same statement: the write ends the task, and a
# stale attempt ends it too.
_LOCK_FOR_WRITE = settled_with(
    select(_K.extract_override).where(*_CLAIMABLE_ATTEMPT).with_for_update()
)


class _SupersededError(Exception):
    """Raised from a progress callback when the attempt stopped being current."""


class ProcessOutcome(StrEnum):
    INDEXED = "indexed"  # chunks written; completed, or finalizing with graph tasks in the outbox
    FAILED = "failed"
    STALE = "stale"  # superseded, cancelled, deleted or already done: nothing touched


def chunk_id_for(knowledge_id: uuid.UUID, attempt: int, seq: int) -> uuid.UUID:
    """The same chunk of the same attempt always gets the same id (re-runs write identical rows)."""
    return uuid.uuid5(knowledge_id, f"{attempt}:{seq}")


@dataclass(frozen=True)
class _Job:
    """What the claim step learnt, so later steps do not go back to the database for it."""

    knowledge_id: uuid.UUID
    kb_id: uuid.UUID
    attempt: int
    file_type: FileType
    storage_path: str
    chunking: ChunkingConfig
    indexing: IndexingStrategy
    lease: TaskLease  # the task's outbox row, settled with the run's last write


def _stale(ctx: IngestContext, job: _Job) -> ProcessOutcome:
    """End the run and delete the task's row when the work finds its attempt stale before its
    write (the write's own stale end does both in its transaction)."""
    with session_scope(ctx.sessions) as session:
        end_run(session, job.knowledge_id)
        job.lease.settle(session)
    return ProcessOutcome.STALE


def _claim(
    ctx: IngestContext, knowledge_id: uuid.UUID, attempt: int, lease: TaskLease
) -> _Job | None:
    """Take the attempt and count this run, committed before any work: a run that dies with its
    worker leaves its count behind (every other end takes it back), and a document whose runs
    keep dying, whatever its attempts, is failed here. The task's row is renewed with the
    claim, or deleted when there is nothing to do."""
    with session_scope(ctx.sessions) as session:
        job = _take(ctx, session, knowledge_id, attempt, lease)
        if job is None:
            lease.settle(session)
        return job


def _take(
    ctx: IngestContext, session: Session, knowledge_id: uuid.UUID, attempt: int, lease: TaskLease
) -> _Job | None:
    params = {"p_id": knowledge_id, "p_attempt": attempt, **lease.params()}
    claimed = session.execute(_LOCK_FOR_CLAIM, params).first()
    if claimed is None:
        return None
    kb_id, file_type, storage_path, unsettled, chunking, indexing = claimed
    budget = ctx.settings.ingest.max_deliveries
    if fail_if_poisoned(session, knowledge_id, attempt, unsettled, budget):
        return None
    # The parse stage starts with the claim: one transaction, not two.
    parse = {Stage.PARSE: StageProgress(status=StageStatus.RUNNING).stored()}
    start_processing(session, knowledge_id, attempt, parse)
    return _Job(
        knowledge_id,
        kb_id,
        attempt,
        FileType(file_type),
        storage_path or "",
        ChunkingConfig.model_validate(chunking),
        IndexingStrategy.model_validate(indexing),
        lease,
    )


def process_document(
    ctx: IngestContext, knowledge_id: uuid.UUID, attempt: int, lease: TaskLease
) -> ProcessOutcome:
    """Run the whole indexing of one attempt of one document; `lease` is its task's row."""
    job = _claim(ctx, knowledge_id, attempt, lease)
    if job is None:
        log.info("document %s attempt %s: stale or finished, nothing to do", knowledge_id, attempt)
        return ProcessOutcome.STALE
    if attempt > 1:
        # A re-parse: the previous attempt's graph goes first, before anything new is written.
        remove_document_graph(ctx, job.kb_id, job.knowledge_id, job.attempt)
    return _index(ctx, job)


def _index(ctx: IngestContext, job: _Job) -> ProcessOutcome:
    """Parse, chunk, embed and write; every end (the write, a failure, finding the attempt
    stale) ends the run and the task's row in one transaction."""
    try:
        parsed = _parse(ctx, job)
    except _SupersededError:
        return _stale(ctx, job)
    except (ParseError, InvalidInputError) as exc:
        with session_scope(ctx.sessions) as session:
            mark_failed(session, job.knowledge_id, job.attempt, exc.message)
            end_run(session, job.knowledge_id)
            job.lease.settle(session)
        log.info("document %s failed to parse: %s", job.knowledge_id, exc.message)
        return ProcessOutcome.FAILED
    if parsed is None:
        return _stale(ctx, job)
    drafts = chunk_document(parsed, job.chunking)
    embedded = _embed(ctx, job, drafts)
    if embedded is None:
        return _stale(ctx, job)
    vectors, embed_stage = embedded
    graph_chunk_ids = _write(ctx, job, parsed, drafts, vectors, embed_stage)
    if graph_chunk_ids is None:
        return ProcessOutcome.STALE
    return ProcessOutcome.INDEXED


def fail_document(
    ctx: IngestContext,
    knowledge_id: uuid.UUID,
    attempt: int,
    exc: BaseException,
    reason: str | None = None,
) -> None:
    """End an attempt that crashed as `failed`, with `reason` or the error's name (no internals);
    the run ended (its worker lives on), so it does not count towards the poison budget."""
    with session_scope(ctx.sessions) as session:
        mark_failed(
            session, knowledge_id, attempt, reason or f"internal error ({type(exc).__name__})"
        )
        end_run(session, knowledge_id)
    log.error("document %s attempt %s crashed: %r", knowledge_id, attempt, exc)


def _stage(
    ctx: IngestContext, job: _Job, stage: Stage, status: StageStatus, **counts: int | float
) -> bool:
    with session_scope(ctx.sessions) as session:
        return set_stage(session, job.knowledge_id, job.attempt, stage, status, **counts)


def _parse(ctx: IngestContext, job: _Job) -> ParsedDocument | None:
    started = time.monotonic()
    data = ctx.storage.read(job.storage_path)

    def on_page(done: int, total: int) -> None:
        # Stop between pages once the document is cancelled, deleted or re-parsed.
        if not _stage(ctx, job, Stage.PARSE, StageStatus.RUNNING, done=done, total=total):
            raise _SupersededError

    captioner = build_captioner(ctx.settings)
    parsed = parse_file(data, job.file_type, ctx.settings.ingest, captioner, on_page=on_page)
    if captioner is not None:
        parsed = parsed.model_copy(update={"captions": captioner.stats})
    pages = len(parsed.pages)
    seconds = time.monotonic() - started
    if not _stage(
        ctx, job, Stage.PARSE, StageStatus.DONE, done=pages, total=pages, seconds=seconds
    ):
        return None
    return parsed


def _embed(
    ctx: IngestContext, job: _Job, drafts: list[ChunkDraft]
) -> tuple[list[list[float] | None], StageProgress] | None:
    """Vectors for the chunks with text, batch by batch, reporting progress between batches;
    with the stage's end, which the write records (one transaction fewer a document)."""
    total = len(drafts)
    if not job.indexing.vector:
        return [None] * total, StageProgress(status=StageStatus.SKIPPED, total=total)
    started = time.monotonic()
    batch = ctx.settings.embedding.batch_size
    vectors: list[list[float] | None] = []
    unsearchable = 0
    for start in range(0, total, batch):
        texts = [d.content for d in drafts[start : start + batch]]
        embedded = ctx.embedder.embed([t for t in texts if t.strip()])
        # A vector without a positive finite norm is stored as none: the chunk is still found
        # by keyword and through the graph, never by a NaN cosine.
        kept = [v if searchable(v) else None for v in embedded]
        unsearchable += sum(v is None for v in kept)
        it = iter(kept)
        vectors.extend(next(it) if t.strip() else None for t in texts)
        # Between batches, progress (and a check that the attempt is still current); the write
        # checks it after the last one.
        running = len(vectors) < total
        if running and not _stage(
            ctx, job, Stage.EMBED, StageStatus.RUNNING, done=len(vectors), total=total
        ):
            return None
    seconds = time.monotonic() - started
    skip_unsearchable(VectorUse.CHUNK, unsearchable)
    detail = f"{unsearchable} chunk vector(s) without a positive finite norm stored without one"
    return vectors, StageProgress(
        status=StageStatus.DONE,
        done=total,
        total=total,
        skipped=unsearchable,
        detail=detail if unsearchable else None,
        seconds=seconds,
    )


def _new_chunks(job: _Job, drafts: list[ChunkDraft]) -> list[GraphCandidate]:
    """The document's new chunks as the graph plan reads them, none sent to the graph yet."""
    ids = {d.seq: chunk_id_for(job.knowledge_id, job.attempt, d.seq) for d in drafts}
    return [
        GraphCandidate(
            id=ids[d.seq],
            seq=d.seq,
            chunk_type=d.chunk_type.value,
            content=d.content,
            parent_chunk_id=ids[d.parent_seq] if d.parent_seq is not None else None,
            graph_status=GraphStatus.SKIPPED,
        )
        for d in drafts
    ]


def _chunk_rows(
    job: _Job,
    chunks: list[GraphCandidate],
    drafts: list[ChunkDraft],
    vectors: list[list[float] | None],
) -> list[dict[str, Any]]:
    return [
        {
            **chunk._asdict(),
            "kb_id": job.kb_id,
            "knowledge_id": job.knowledge_id,
            "attempt": job.attempt,
            "page": d.page,
            "start_offset": d.start_offset,
            "end_offset": d.end_offset,
            "enabled": True,
            "embedding": vector,
            "graph_error": None,
        }
        for chunk, d, vector in zip(chunks, drafts, vectors, strict=True)
    ]


def _mark_planned(rows: list[dict[str, Any]], plan: GraphPlan) -> None:
    """The plan written into the rows about to be inserted (the document's whole chunk set)."""
    pending, over = set(plan.extract), set(plan.over_budget)
    for row in rows:
        if row["id"] in pending:
            row["graph_status"] = GraphStatus.PENDING
        elif row["id"] in over:
            row["graph_error"] = plan.reason


def _write(
    ctx: IngestContext,
    job: _Job,
    parsed: ParsedDocument,
    drafts: list[ChunkDraft],
    vectors: list[list[float] | None],
    embed_stage: StageProgress,
) -> list[uuid.UUID] | None:
    """Replace the document's chunks, settle its status and write its graph tasks in one
    transaction (with the end of the embedding stage); the chunks sent to the graph. None: the
    attempt is stale, and the same transaction ended the run and deleted the task's row."""
    started = time.monotonic()
    chunks = _new_chunks(job, drafts)
    rows = _chunk_rows(job, chunks, drafts, vectors)
    with session_scope(ctx.sessions) as session:
        # The base first, then the document: the order a base's update or deletion locks them.
        base_on = _base_graph_on_now(ctx, session, job)
        params = {"p_id": job.knowledge_id, "p_attempt": job.attempt, **job.lease.params()}
        locked = session.execute(_LOCK_FOR_WRITE, params).first()
        if locked is None:
            # Stale: the lock's statement deleted the task's row; the run ends with it.
            end_run(session, job.knowledge_id)
            return None
        own = locked.extract_override
        graph_on = base_on and (not own or own.get("enabled") is not False)
        plan = plan_graph(chunks if graph_on else [], ctx.settings.ingest.graph_max_chunks)
        _mark_planned(rows, plan)
        session.execute(_DELETE_CHUNKS, {"p_id": job.knowledge_id})
        if rows:
            session.execute(_INSERT_CHUNKS, rows)
        index_stage = StageProgress(
            status=StageStatus.DONE,
            done=len(rows),
            total=len(rows),
            seconds=time.monotonic() - started,
        )
        stages = {
            Stage.EMBED: embed_stage.stored(),
            Stage.INDEX: index_stage.stored(),
            Stage.GRAPH: plan.stage.stored(),
        }
        written = {
            "p_chunks": len(rows),
            "p_pages": len(parsed.pages),
            "p_stats": parsed.stats.model_dump(),
            "p_stages": stages,
        }
        settle_indexing(session, job.knowledge_id, job.attempt, plan.extract, written)
        return plan.extract


def _base_graph_on_now(ctx: IngestContext, session: Session, job: _Job) -> bool:
    """The base's graph switch as committed now, read under a share lock of the base's row: a
    switch flipped while this document was parsed is seen here (see `ingest.graph.switch`).
    The document's own switch, read with its lock, may only turn it off."""
    row = session.execute(_GRAPH_SWITCH, {"p_kb": job.kb_id}).first()
    return row is not None and stored_graph_on(ctx.settings, row.indexing, row.extract_config)
