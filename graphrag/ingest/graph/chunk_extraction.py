"""The `graph.extract_chunk` work: one LLM call for one chunk, merged into the graph.

A chunk settles exactly once (done or failed) and releases its document's counter; an answer
the model gave in prose, or empty, is a chunk with no graph, not a failure and not a retry.
The task's lease on its outbox row (`TaskLease`, from the worker) is renewed by the read that
starts it and settled by the transaction that ends it (settled, or stale), so a task costs two
transactions around its LLM call, not five.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from sqlalchemy import Integer, bindparam, select, update
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.accounting import ChunkCost, add_cost
from graphrag.db.engine import execute_alone, session_scope
from graphrag.db.enums import GraphStatus, ParseStatus
from graphrag.db.lifecycle import finish_chunk_subtask
from graphrag.db.live_attempt import hold_live
from graphrag.db.models import Chunk, Knowledge, KnowledgeBase, core_table
from graphrag.db.outbox import TaskLease, enqueue, resolve_entities, started_with
from graphrag.errors import (
    EmbeddingError,
    GraphDataError,
    GraphStoreError,
    LlmRequestError,
    ServiceUnavailableError,
)
from graphrag.extraction.drops import DropCounts
from graphrag.extraction.graph_cleanup import ParseOptions
from graphrag.extraction.models import ExtractConfig
from graphrag.extraction.output_parser import ParseOutcome, parse_graph_output
from graphrag.extraction.overrides import ExtractOverride, effective_config
from graphrag.extraction.prompt_builder import build_extraction_request
from graphrag.extraction.trace import chunk_trace
from graphrag.graph.models import GraphData
from graphrag.graph.name_vectors import EmbedTexts, KeysInHand, write_name_vectors
from graphrag.graph.resolution.store import Neo4jResolutionStore
from graphrag.graph.store import GraphStore
from graphrag.llm.client import LlmClient, LlmReply
from graphrag.settings import Settings

__all__ = [
    "PERMANENT",
    "RETRYABLE",
    "ChunkOutcome",
    "GraphContext",
    "extract_chunk_graph",
    "fail_chunk",
    "time_limit_reason",
]

log = logging.getLogger(__name__)

# Faults a later try may not meet again: the LLM down, slow or answering 5xx, no free LLM slot in
# time, Neo4j unreachable or in a transient state.
RETRYABLE = (ServiceUnavailableError,)
# Faults of the request or the data: the same try fails the same way, so the chunk fails at once.
PERMANENT = (LlmRequestError, GraphDataError)


@dataclass(frozen=True)
class GraphContext:
    settings: Settings
    sessions: sessionmaker[Session]
    llm: LlmClient
    graph: GraphStore
    embed_names: EmbedTexts | None = None  # name vectors for near matches; None: none written
    names_in_hand: KeysInHand = field(default_factory=KeysInHand)  # shared by the threads
    resolution: Neo4jResolutionStore | None = None  # None: no entity resolution (graph off)


class ChunkOutcome(StrEnum):
    DONE = "done"
    FAILED = "failed"
    STALE = "stale"


@dataclass(frozen=True)
class _Work:
    kb_id: uuid.UUID
    text: str
    config: ExtractConfig


@dataclass(frozen=True)
class _Key:
    knowledge_id: uuid.UUID
    attempt: int
    chunk_id: uuid.UUID
    lease: TaskLease  # the task's outbox row, renewed by the read, settled with the chunk


_K, _C, _B = (core_table(model).c for model in (Knowledge, Chunk, KnowledgeBase))
# The few columns the task reads, in one query built once: loading the three rows as objects
# (the chunk's vector among them) was a large share of a task's CPU in the graph worker. The
# same statement starts the task's lease (`started_with`), so the read is one autocommitted
# round trip.
_LOAD = started_with(
    select(
        _K.kb_id,
        _K.attempt,
        _K.parse_status,
        _C.attempt,
        _C.graph_status,
        _C.content,
        _B.extract_config,
        _K.extract_override,
    )
    .select_from(core_table(Chunk))
    .join(core_table(Knowledge), _K.id == _C.knowledge_id)
    .join(core_table(KnowledgeBase), _B.id == _K.kb_id)
    .where(_C.id == bindparam("p_chunk"), _C.knowledge_id == bindparam("p_id"))
)
_CHUNK_DROPS = select(_C.graph_drops).where(
    _C.knowledge_id == bindparam("p_id"),
    _C.attempt == bindparam("p_attempt"),
    _C.graph_drops != {},
)
_SET_DROPS = (
    update(core_table(Knowledge))
    .where(_K.id == bindparam("p_id"), _K.attempt == bindparam("p_attempt"))
    .values(graph_drops=bindparam("p_drops", type_=_K.graph_drops.type))
)
# The drops and the graph's totals in one UPDATE (the totals counted).
_SET_TOTALS = _SET_DROPS.values(
    entity_count=bindparam("p_nodes", type_=Integer),
    relation_count=bindparam("p_relations", type_=Integer),
)


def time_limit_reason(settings: Settings) -> str:
    """Why a chunk whose task ran past its soft time limit failed."""
    return f"extraction exceeded its time limit ({settings.celery.graph_soft_limit_s} s)"


def _load(ctx: GraphContext, key: _Key) -> _Work | None:
    """The chunk's work while its attempt waits for it, its task's lease started from now."""
    params = {"p_chunk": key.chunk_id, "p_id": key.knowledge_id, **key.lease.params()}
    rows = execute_alone(ctx.sessions, _LOAD, params)
    if not rows:
        return None
    kb_id, doc_attempt, parse_status, chunk_attempt, graph_status, content, config, own = rows[0]
    if (
        doc_attempt != key.attempt
        or chunk_attempt != key.attempt
        or parse_status != ParseStatus.FINALIZING
        or graph_status != GraphStatus.PENDING
    ):
        return None
    base = ExtractConfig.model_validate(config)
    override = ExtractOverride.model_validate(own) if own else None
    return _Work(kb_id, content, effective_config(base, override))


@dataclass
class _Spend:
    """What the task has spent: its start, and the LLM call the server answered until a
    transaction has counted it (each call is counted once, by whichever ends the task)."""

    started: float
    reply: LlmReply | None = None

    def cost(self, *, timed: bool = True) -> ChunkCost:
        seconds = time.monotonic() - self.started if timed else 0.0
        reply = self.reply
        if reply is None:
            return ChunkCost(seconds)
        usage = reply.usage
        return ChunkCost(
            seconds, 1, usage.prompt_tokens or 0, usage.completion_tokens or 0, reply.seconds
        )


@dataclass(frozen=True)
class _Read:
    """What one answer gave: the parsed graph with its drops, and its trace for the chunk row."""

    outcome: ParseOutcome
    trace: dict[str, Any]


def _extract(ctx: GraphContext, work: _Work, spend: _Spend) -> _Read:
    request = build_extraction_request(work.config, work.text, ctx.settings.extraction)
    reply = ctx.llm.complete(request.messages, request.response_format)
    # Counted from here on: a later fault does not undo the call.
    spend.reply = reply
    options = ParseOptions.from_settings(
        ctx.settings.extraction,
        work.config.tags,
        example_names=request.example_names,
        chunk_text=work.text,
    )
    outcome = parse_graph_output(reply.content, options)
    log.debug("extraction reply %s (finish %s)", outcome.kind, reply.finish_reason)
    sample = ctx.settings.extraction.trace_sample
    return _Read(outcome, chunk_trace(outcome, reply.finish_reason, sample))


def _write_name_vectors(ctx: GraphContext, kb_id: uuid.UUID, missing: list[str]) -> None:
    if ctx.embed_names is None or not ctx.settings.extraction.name_vectors:
        return
    try:
        write_name_vectors(ctx.graph, kb_id, missing, ctx.embed_names, ctx.names_in_hand)
    except EmbeddingError as exc:
        # Near matches are a bonus on top of exact ones: the chunk's graph still stands.
        log.warning("name vectors not written for base %s: %s", kb_id, exc.message)


def extract_chunk_graph(
    ctx: GraphContext,
    knowledge_id: uuid.UUID,
    attempt: int,
    chunk_id: uuid.UUID,
    lease: TaskLease,
    *,
    final_try: bool,
) -> ChunkOutcome:
    """Extract and store one chunk's graph. Transient faults raise unless this is the final
    try, which instead settles the chunk as failed with the reason.

    What the task cost is counted in the transaction that ends it: the chunk's settlement, or
    the note of its retry.
    """
    spend = _Spend(time.monotonic())
    key = _Key(knowledge_id, attempt, chunk_id, lease)
    work = _load(ctx, key)
    if work is None:
        with session_scope(ctx.sessions) as session:
            key.lease.settle(session)
        return ChunkOutcome.STALE
    try:
        return _run(ctx, work, key, spend, final_try)
    except BaseException:
        if spend.reply is not None:
            # An unexpected fault (a bug, a time limit) after the server answered: the call
            # still counts, on its own, before the fault goes on to fail the chunk.
            _count_unsettled(ctx, key, spend)
        raise


def _run(ctx: GraphContext, work: _Work, key: _Key, spend: _Spend, final_try: bool) -> ChunkOutcome:
    try:
        read = _extract(ctx, work, spend)
        if time.monotonic() - spend.started > ctx.settings.celery.graph_soft_limit_s:
            # The task's own deadline, checked between its steps: Celery's threads pool
            # enforces no time limit, and a step (a slot wait, the call) is bounded only by its
            # own timeout. The answer is counted; nothing is written.
            _settle(ctx, key, GraphStatus.FAILED, time_limit_reason(ctx.settings), spend)
            log.warning("chunk %s failed: over its time limit", key.chunk_id)
            return ChunkOutcome.FAILED
        if not _write_and_settle(ctx, work, key, read, spend):
            return ChunkOutcome.STALE
    except RETRYABLE as exc:
        if not final_try:
            _count_unsettled(ctx, key, spend, retry=True)
            raise
        _settle(ctx, key, GraphStatus.FAILED, exc.message, spend)
        log.warning("chunk %s failed for good: %s", key.chunk_id, exc.message)
        return ChunkOutcome.FAILED
    except PERMANENT as exc:
        _settle(ctx, key, GraphStatus.FAILED, exc.message, spend)
        log.warning("chunk %s failed without retry: %s", key.chunk_id, exc.message)
        return ChunkOutcome.FAILED
    return ChunkOutcome.DONE


def _count_unsettled(ctx: GraphContext, key: _Key, spend: _Spend, *, retry: bool = False) -> None:
    """Count what a task that settles nothing spent: with `retry`, a try that will be made
    again (one retry, its seconds and its call if answered); else only the answered call of a
    task that broke."""
    with session_scope(ctx.sessions) as session:
        add_cost(session, key.knowledge_id, key.attempt, spend.cost(timed=retry), retry=retry)
    spend.reply = None


def _write_and_settle(
    ctx: GraphContext, work: _Work, key: _Key, read: _Read, spend: _Spend
) -> bool:
    """Write the chunk's graph and settle the chunk in one transaction, only while its attempt
    is live: the key-share locks `hold_live` takes fence the write (a delete or re-parse waits
    for the commit, and its purge removes what was written) without holding up the sibling
    chunks' settlements. False: the document went away during the extraction; nothing is
    written, the answered call alone is counted and the task's row goes."""
    with session_scope(ctx.sessions) as session:
        if not hold_live(session, work.kb_id, key.knowledge_id, key.attempt):
            add_cost(session, key.knowledge_id, key.attempt, spend.cost(timed=False))
            key.lease.settle(session)
            live = False
        else:
            graph = read.outcome.data
            if not graph.is_empty:
                missing = ctx.graph.write_chunk_graph(
                    work.kb_id, key.knowledge_id, key.chunk_id, graph
                )
                _write_name_vectors(ctx, work.kb_id, missing)
            drops = read.outcome.drops
            _settle_in(ctx, session, key, GraphStatus.DONE, None, spend, graph, drops, read.trace)
            live = True
    spend.reply = None
    return live


def fail_chunk(
    ctx: GraphContext,
    knowledge_id: uuid.UUID,
    attempt: int,
    chunk_id: uuid.UUID,
    lease: TaskLease,
    reason: str,
) -> None:
    """Settle a chunk as failed for a reason found outside the extraction (e.g. a time limit)."""
    key = _Key(knowledge_id, attempt, chunk_id, lease)
    _settle(ctx, key, GraphStatus.FAILED, reason, _Spend(time.monotonic()))


def _settle(
    ctx: GraphContext, key: _Key, outcome: GraphStatus, error: str | None, spend: _Spend
) -> None:
    """Settle the chunk without a graph (failed) in a transaction of its own."""
    with session_scope(ctx.sessions) as session:
        _settle_in(ctx, session, key, outcome, error, spend)
    spend.reply = None


def _settle_in(
    ctx: GraphContext,
    session: Session,
    key: _Key,
    outcome: GraphStatus,
    error: str | None,
    spend: _Spend,
    graph: GraphData | None = None,
    drops: DropCounts | None = None,
    trace: dict[str, Any] | None = None,
) -> None:
    """Settle the chunk (with the entity keys its graph named, what its cleanup dropped and the
    trace of its read), count what its task cost and delete the task's row, in the caller's
    transaction and one statement; the settlement that completes the document counts its graph
    and its drops."""
    cost = spend.cost()
    status = finish_chunk_subtask(
        session,
        key.knowledge_id,
        key.attempt,
        key.chunk_id,
        outcome,
        error,
        cost=cost,
        entity_keys=graph.entity_keys() if graph is not None else (),
        graph_drops=drops.flat() if drops is not None else None,
        trace=trace,
        lease=key.lease,
    )
    if status is None and cost.llm_calls:
        # Settled before (a task delivered twice): only its LLM call still counts.
        add_cost(session, key.knowledge_id, key.attempt, replace(cost, seconds=0.0))
    elif status is ParseStatus.COMPLETED:
        _count_totals(ctx, session, key, strict=outcome is GraphStatus.DONE)
        if ctx.resolution is not None and ctx.settings.resolution.enabled:
            enqueue(session, resolve_entities(key.knowledge_id))


def _count_totals(ctx: GraphContext, session: Session, key: _Key, *, strict: bool) -> None:
    """The document's drop counts (the sum of its chunks': every chunk has settled) and its
    entity and relation totals (every graph write of the attempt committed before its chunk
    settled), written by one statement. `strict` False: a failed last chunk (often a graph
    store that is down) keeps the totals as they were rather than leave the document
    unsettled."""
    params = {"p_id": key.knowledge_id, "p_attempt": key.attempt}
    total: Counter[str] = Counter()
    for (stored,) in session.execute(_CHUNK_DROPS, params):
        total.update(DropCounts.from_flat(stored).flat())
    params["p_drops"] = dict(total)
    try:
        counts = ctx.graph.document_counts(key.knowledge_id)
    except GraphStoreError as exc:
        if strict:
            raise
        log.warning("graph totals of %s not counted: %s", key.knowledge_id, exc.message)
        session.execute(_SET_DROPS, params)
        return
    totals = {"p_nodes": counts.nodes, "p_relations": counts.relations}
    session.execute(_SET_TOTALS, params | totals)
