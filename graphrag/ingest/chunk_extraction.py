"""The `graph.extract_chunk` work: one LLM call for one chunk, merged into the graph.

A chunk settles exactly once (done or failed) and releases its document's counter; an answer
the model gave in prose, or empty, is a chunk with no graph, not a failure and not a retry.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.accounting import add_graph_retry, add_graph_seconds, add_llm_call
from graphrag.db.chunk_keys import set_chunk_entity_keys
from graphrag.db.engine import session_scope
from graphrag.db.enums import GraphStatus, ParseStatus
from graphrag.db.lifecycle import finish_chunk_subtask, hold_live
from graphrag.db.models import Chunk, Knowledge, KnowledgeBase
from graphrag.errors import (
    EmbeddingError,
    GraphDataError,
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
from graphrag.llm.client import LlmClient
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
    doc = session.get(Knowledge, knowledge_id)
    chunk = session.get(Chunk, chunk_id)
    if (
        doc is None
        or chunk is None
        or doc.attempt != attempt
        or chunk.attempt != attempt
        or doc.parse_status != ParseStatus.FINALIZING
        or chunk.graph_status != GraphStatus.PENDING
    ):
        return None
    kb = session.get(KnowledgeBase, doc.kb_id)
    if kb is None:
        return None
    return _Work(doc.kb_id, chunk.content, ExtractConfig.model_validate(kb.extract_config))


def _extract(ctx: GraphContext, work: _Work, knowledge_id: uuid.UUID, attempt: int) -> GraphData:
    request = build_extraction_request(work.config, work.text, ctx.settings.extraction)
    reply = ctx.llm.complete(request.messages, request.response_format)
    with session_scope(ctx.sessions) as session:
        # Counted as soon as the server answered: a later fault does not undo the call.
        add_llm_call(
            session,
            knowledge_id,
            attempt,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            seconds=reply.seconds,
        )
    options = ParseOptions.from_settings(ctx.settings.extraction, work.config.tags)
    outcome = parse_graph_output(reply.content, options)
    log.debug("extraction reply %s (finish %s)", outcome.kind, reply.finish_reason)
    return outcome.data


def _write_name_vectors(ctx: GraphContext, kb_id: uuid.UUID, graph: GraphData) -> None:
    if ctx.embed_names is None or not ctx.settings.extraction.name_vectors:
        return
    try:
        write_name_vectors(ctx.graph, kb_id, graph, ctx.embed_names)
    except EmbeddingError as exc:
        # Near matches are a bonus on top of exact ones: the chunk's graph still stands.
        log.warning("name vectors not written for base %s: %s", kb_id, exc.message)


def extract_chunk_graph(
    ctx: GraphContext,
    knowledge_id: uuid.UUID,
    attempt: int,
    chunk_id: uuid.UUID,
    *,
    final_try: bool,
) -> ChunkOutcome:
    """Extract and store one chunk's graph. Transient faults raise unless this is the final
    try, which instead settles the chunk as failed with the reason."""
    started = time.monotonic()
    with session_scope(ctx.sessions) as session:
        work = _load(session, knowledge_id, attempt, chunk_id)
    if work is None:
        return ChunkOutcome.STALE
    try:
        graph = _extract(ctx, work, knowledge_id, attempt)
        if not _write_fenced(ctx, work, knowledge_id, attempt, chunk_id, graph):
            return ChunkOutcome.STALE
        seconds = time.monotonic() - started
        _settle(ctx, knowledge_id, attempt, chunk_id, GraphStatus.DONE, None, seconds)
    except RETRYABLE as exc:
        seconds = time.monotonic() - started
        if not final_try:
            with session_scope(ctx.sessions) as session:
                add_graph_retry(session, knowledge_id, attempt, seconds)
            raise
        _settle(ctx, knowledge_id, attempt, chunk_id, GraphStatus.FAILED, exc.message, seconds)
        log.warning("chunk %s failed for good: %s", chunk_id, exc.message)
        return ChunkOutcome.FAILED
    except PERMANENT as exc:
        seconds = time.monotonic() - started
        _settle(ctx, knowledge_id, attempt, chunk_id, GraphStatus.FAILED, exc.message, seconds)
        log.warning("chunk %s failed without retry: %s", chunk_id, exc.message)
        return ChunkOutcome.FAILED
    return ChunkOutcome.DONE


def _write_fenced(
    ctx: GraphContext,
    work: _Work,
    knowledge_id: uuid.UUID,
    attempt: int,
    chunk_id: uuid.UUID,
    graph: GraphData,
) -> bool:
    """Write the chunk's graph only while its attempt is live, holding that fact until the write
    commits (False: the document went away during the extraction, nothing written)."""
    with session_scope(ctx.sessions) as session:
        if not hold_live(session, knowledge_id, attempt):
            return False
        if not graph.is_empty:
            ctx.graph.write_chunk_graph(work.kb_id, knowledge_id, chunk_id, graph)
            set_chunk_entity_keys(session, chunk_id, attempt, graph.entity_keys())
            _write_name_vectors(ctx, work.kb_id, graph)
    return True


def fail_chunk(
    ctx: GraphContext, knowledge_id: uuid.UUID, attempt: int, chunk_id: uuid.UUID, reason: str
) -> None:
    """Settle a chunk as failed for a reason found outside the extraction (e.g. a time limit)."""
    _settle(ctx, knowledge_id, attempt, chunk_id, GraphStatus.FAILED, reason)


def _settle(
    ctx: GraphContext,
    knowledge_id: uuid.UUID,
    attempt: int,
    chunk_id: uuid.UUID,
    outcome: GraphStatus,
    error: str | None,
    seconds: float = 0.0,
) -> None:
    with session_scope(ctx.sessions) as session:
        if not finish_chunk_subtask(session, knowledge_id, attempt, chunk_id, outcome, error):
            return
        add_graph_seconds(session, knowledge_id, attempt, seconds)
        if outcome is GraphStatus.DONE:
            # Counted while the document row is locked: chunks of one document settle one after
            # another, so the last one counts every graph written before it.
            counts = ctx.graph.document_counts(knowledge_id)
            session.execute(
                update(Knowledge)
                .where(Knowledge.id == knowledge_id, Knowledge.attempt == attempt)
                .values(entity_count=counts.nodes, relation_count=counts.relations)
            )
