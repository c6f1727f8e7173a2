"""The `graph.extract_chunk` work: one LLM call for one chunk, merged into the graph.

A chunk settles exactly once (done or failed) and releases its document's counter; an answer
the model gave in prose, or empty, is a chunk with no graph, not a failure and not a retry.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.accounting import ChunkCost, add_cost, cost_values
from graphrag.db.engine import session_scope
from graphrag.db.enums import GraphStatus, ParseStatus
from graphrag.db.lifecycle import finish_chunk_subtask, hold_live
from graphrag.db.models import Chunk, Knowledge, KnowledgeBase
from graphrag.errors import (
    EmbeddingError,
    GraphDataError,
    GraphStoreError,
    LlmRequestError,
    ServiceUnavailableError,
)
from graphrag.extraction.graph_cleanup import ParseOptions
from graphrag.extraction.models import ExtractConfig
from graphrag.extraction.output_parser import parse_graph_output
from graphrag.extraction.prompt_builder import build_extraction_request
from graphrag.graph.models import GraphData
from graphrag.graph.name_vectors import EmbedTexts, write_name_vectors
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


class ChunkOutcome(StrEnum):
    DONE = "done"
    FAILED = "failed"
    STALE = "stale"


@dataclass(frozen=True)
class _Work:
    kb_id: uuid.UUID
    text: str
    config: ExtractConfig


def _load(
    session: Session, knowledge_id: uuid.UUID, attempt: int, chunk_id: uuid.UUID
) -> _Work | None:
    # The few columns the task reads, in one query: loading the three rows as objects (the
    # chunk's vector among them) was a large share of a task's CPU in the graph worker.
    row = session.execute(
        select(
            Knowledge.kb_id,
            Knowledge.attempt,
            Knowledge.parse_status,
            Chunk.attempt,
            Chunk.graph_status,
            Chunk.content,
            KnowledgeBase.extract_config,
        )
        .select_from(Chunk)
        .join(Knowledge, Knowledge.id == Chunk.knowledge_id)
        .join(KnowledgeBase, KnowledgeBase.id == Knowledge.kb_id)
        .where(Chunk.id == chunk_id, Chunk.knowledge_id == knowledge_id)
    ).one_or_none()
    if row is None:
        return None
    kb_id, doc_attempt, parse_status, chunk_attempt, graph_status, content, config = row
    if (
        doc_attempt != attempt
        or chunk_attempt != attempt
        or parse_status != ParseStatus.FINALIZING
        or graph_status != GraphStatus.PENDING
    ):
        return None
    return _Work(kb_id, content, ExtractConfig.model_validate(config))


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
        return ChunkCost(seconds, 1, reply.prompt_tokens, reply.completion_tokens, reply.seconds)


def _extract(ctx: GraphContext, work: _Work, spend: _Spend) -> GraphData:
    request = build_extraction_request(work.config, work.text, ctx.settings.extraction)
    reply = ctx.llm.complete(request.messages, request.response_format)
    # Counted from here on: a later fault does not undo the call.
    spend.reply = reply
    options = ParseOptions.from_settings(ctx.settings.extraction, work.config.tags)
    outcome = parse_graph_output(reply.content, options)
    log.debug("extraction reply %s (finish %s)", outcome.kind, reply.finish_reason)
    return outcome.data


def _write_name_vectors(ctx: GraphContext, kb_id: uuid.UUID, missing: list[str]) -> None:
    if ctx.embed_names is None or not ctx.settings.extraction.name_vectors:
        return
    try:
        write_name_vectors(ctx.graph, kb_id, missing, ctx.embed_names)
    except EmbeddingError as exc:
        # Near matches are a bonus on top of exact ones: the chunk's graph still stands.
        log.warning("name vectors not written for base %s: %s", kb_id, exc.message)


@dataclass(frozen=True)
class _Key:
    knowledge_id: uuid.UUID
    attempt: int
    chunk_id: uuid.UUID


def extract_chunk_graph(
    ctx: GraphContext,
    knowledge_id: uuid.UUID,
    attempt: int,
    chunk_id: uuid.UUID,
    *,
    final_try: bool,
) -> ChunkOutcome:
    """Extract and store one chunk's graph. Transient faults raise unless this is the final
    try, which instead settles the chunk as failed with the reason.

    What the task cost is counted in the transaction that ends it: the chunk's settlement, or
    the note of its retry.
    """
    spend = _Spend(time.monotonic())
    with session_scope(ctx.sessions) as session:
        work = _load(session, knowledge_id, attempt, chunk_id)
    if work is None:
        return ChunkOutcome.STALE
    key = _Key(knowledge_id, attempt, chunk_id)
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
        graph = _extract(ctx, work, spend)
        missing = _write_fenced(ctx, work, key, graph)
        if missing is None:
            _count_unsettled(ctx, key, spend)
            return ChunkOutcome.STALE
        _write_name_vectors(ctx, work.kb_id, missing)
        _settle(ctx, key, GraphStatus.DONE, None, spend, graph.entity_keys())
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
    task whose document went away or that broke."""
    with session_scope(ctx.sessions) as session:
        add_cost(session, key.knowledge_id, key.attempt, spend.cost(timed=retry), retry=retry)
    spend.reply = None


def _write_fenced(ctx: GraphContext, work: _Work, key: _Key, graph: GraphData) -> list[str] | None:
    """Write the chunk's graph only while its attempt is live, holding that fact until the write
    commits; the base keys it named that lack a name vector (None: the document went away
    during the extraction, nothing written). Name vectors are written after the fence: they
    only ever set a property of base nodes that exist, so they need none."""
    with session_scope(ctx.sessions) as session:
        if not hold_live(session, work.kb_id, key.knowledge_id, key.attempt):
            return None
        if graph.is_empty:
            return []
        return ctx.graph.write_chunk_graph(work.kb_id, key.knowledge_id, key.chunk_id, graph)


def fail_chunk(
    ctx: GraphContext, knowledge_id: uuid.UUID, attempt: int, chunk_id: uuid.UUID, reason: str
) -> None:
    """Settle a chunk as failed for a reason found outside the extraction (e.g. a time limit)."""
    key = _Key(knowledge_id, attempt, chunk_id)
    _settle(ctx, key, GraphStatus.FAILED, reason, _Spend(time.monotonic()))


def _settle(
    ctx: GraphContext,
    key: _Key,
    outcome: GraphStatus,
    error: str | None,
    spend: _Spend,
    entity_keys: Sequence[str] = (),
) -> None:
    """Settle the chunk (with the entity keys its graph named) and count what its task cost, in
    one transaction; the settlement that completes the document counts its graph."""
    cost = spend.cost()
    with session_scope(ctx.sessions) as session:
        status = finish_chunk_subtask(
            session,
            key.knowledge_id,
            key.attempt,
            key.chunk_id,
            outcome,
            error,
            also=cost_values(cost),
            entity_keys=entity_keys,
        )
        if status is None and cost.llm_calls:
            # Settled before (a task delivered twice): only its LLM call still counts.
            add_cost(session, key.knowledge_id, key.attempt, replace(cost, seconds=0.0))
        elif status is ParseStatus.COMPLETED:
            _count_graph(ctx, session, key, strict=outcome is GraphStatus.DONE)
    spend.reply = None


def _count_graph(ctx: GraphContext, session: Session, key: _Key, *, strict: bool) -> None:
    """The document's entity and relation totals, read once its last chunk settled (every
    graph write of the attempt committed before its chunk settled). `strict` False: a failed
    last chunk (often a graph store that is down) keeps the totals as they were rather than
    leave the document unsettled."""
    try:
        counts = ctx.graph.document_counts(key.knowledge_id)
    except GraphStoreError as exc:
        if strict:
            raise
        log.warning("graph totals of %s not counted: %s", key.knowledge_id, exc.message)
        return
    session.execute(
        update(Knowledge)
        .where(Knowledge.id == key.knowledge_id, Knowledge.attempt == key.attempt)
        .values(entity_count=counts.nodes, relation_count=counts.relations)
    )
