"""Hybrid retrieval: vector + keyword search, weighted RRF, top-k, then the graph complement.

One SQL query per method (plus one `set_config` for the HNSW scan) and one query embedding,
whatever the number of bases. Each base contributes to the methods its indexing strategy
allows. The graph complement is a seam: a `GraphComplement` receives the query and the fused
hits and returns chunks reached through the knowledge graph; they come after the fused top-k
(the complement bounds its own output), marked `graph`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from time import perf_counter
from typing import Protocol

from sqlalchemy.orm import Session

from graphrag.search.embeddings import Embedder
from graphrag.search.fusion import FusionWeights, fuse
from graphrag.search.keyword_search import keyword_search
from graphrag.search.models import (
    MatchType,
    RetrievalRequest,
    RetrievalResult,
    ScoredChunk,
    SearchHit,
    StageTimings,
)
from graphrag.search.vector_search import vector_search
from graphrag.settings import SearchSettings

__all__ = ["GraphComplement", "retrieve"]

_MS_PER_S = 1000.0


class GraphComplement(Protocol):
    """Finds chunks through the knowledge graph of graph-enabled bases."""

    def __call__(
        self,
        session: Session,
        query: str,
        kb_ids: Sequence[uuid.UUID],
        found: Sequence[SearchHit],
    ) -> Sequence[SearchHit]:
        """Chunks linked to the query's entities; those already in `found` are ignored."""
        ...


class _Clock:
    """Milliseconds spent per named stage."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = perf_counter()
        try:
            yield
        finally:
            self.ms[name] = self.ms.get(name, 0.0) + (perf_counter() - start) * _MS_PER_S

    def timings(self) -> StageTimings:
        return StageTimings(**{f"{name}_ms": round(ms, 3) for name, ms in self.ms.items()})


def _run_vector(
    session: Session,
    embedder: Embedder,
    settings: SearchSettings,
    request: RetrievalRequest,
    clock: _Clock,
) -> list[ScoredChunk] | None:
    kb_ids = [s.kb_id for s in request.scopes if s.vector]
    if not (request.use_vector and kb_ids):
        return None
    with clock.stage("embed"):
        query_vector = embedder.embed_query(request.query)
    with clock.stage("vector"):
        return vector_search(
            session,
            settings,
            query_vector,
            kb_ids,
            request.knowledge_ids,
            threshold=request.vector_threshold,
            limit=request.top_k,
        )


def _run_keyword(
    session: Session, request: RetrievalRequest, clock: _Clock
) -> list[ScoredChunk] | None:
    kb_ids = [s.kb_id for s in request.scopes if s.keyword]
    if not (request.use_keyword and kb_ids):
        return None
    with clock.stage("keyword"):
        return keyword_search(
            session,
            request.query,
            kb_ids,
            request.knowledge_ids,
            threshold=request.keyword_threshold,
            limit=request.top_k,
        )


def _complement(
    session: Session,
    request: RetrievalRequest,
    graph: GraphComplement | None,
    fused: list[SearchHit],
    clock: _Clock,
) -> list[SearchHit] | None:
    kb_ids = [s.kb_id for s in request.scopes if s.graph_on]
    if graph is None or not (request.use_graph and kb_ids):
        return None
    with clock.stage("graph"):
        extra = graph(session, request.query, kb_ids, fused)
    seen = {hit.chunk_id for hit in fused}
    added: list[SearchHit] = []
    for hit in extra:
        if hit.chunk_id not in seen:
            seen.add(hit.chunk_id)
            rank = len(fused) + len(added) + 1
            added.append(hit.model_copy(update={"match_type": MatchType.GRAPH, "rank": rank}))
    return added


def retrieve(
    session: Session,
    embedder: Embedder,
    settings: SearchSettings,
    request: RetrievalRequest,
    graph: GraphComplement | None = None,
) -> RetrievalResult:
    """Run the allowed methods, fuse by weighted RRF, keep `top_k`, then add graph chunks."""
    clock = _Clock()
    with clock.stage("total"):
        vector_hits = _run_vector(session, embedder, settings, request, clock)
        keyword_hits = _run_keyword(session, request, clock)
        with clock.stage("fusion"):
            weights = FusionWeights(
                k=settings.rrf_k, vector=settings.vector_weight, keyword=settings.keyword_weight
            )
            fused = fuse(vector_hits or [], keyword_hits or [], weights)[: request.top_k]
        graph_hits = _complement(session, request, graph, fused, clock)
    return RetrievalResult(
        hits=fused + (graph_hits or []),
        vector_used=vector_hits is not None,
        keyword_used=keyword_hits is not None,
        graph_used=graph_hits is not None,
        vector_candidates=len(vector_hits or []),
        keyword_candidates=len(keyword_hits or []),
        timings=clock.timings(),
    )
