"""Hybrid retrieval: vector, keyword and graph lists fused by weighted RRF, then top-k.

One SQL query per method (plus one `set_config` for the HNSW scan) and one query embedding,
whatever the number of bases. Each base contributes to the methods its indexing strategy
allows. With `use_graph` and a graph source, the graph-enabled bases' chunks ranked through the
knowledge graph (`graph_retrieval`) are a third list, seeded by the question's entities and by
the best passages of the vector + keyword fusion, so a chunk the graph strongly supports can
reach rank 1.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from time import perf_counter

from sqlalchemy.orm import Session

from graphrag.db.chunk_keys import chunk_entity_keys
from graphrag.errors import EmbeddingError, GraphStoreError
from graphrag.graph.store import GraphStore
from graphrag.graph.vector_checks import VectorUse, searchable, skip_unsearchable
from graphrag.search.chunk_select import ChunkQuery
from graphrag.search.embeddings import Embedder
from graphrag.search.fusion import FusionWeights, fuse
from graphrag.search.graph_retrieval import (
    GraphQuery,
    GraphRanking,
    SeedPassage,
    rank_in_graph,
    visible_graph_hits,
)
from graphrag.search.keyword_any import keyword_search_any
from graphrag.search.keyword_search import keyword_search
from graphrag.search.models import (
    RetrievalRequest,
    RetrievalResult,
    ScoredChunk,
    SearchHit,
    StageTimings,
)
from graphrag.search.vector_search import vector_search
from graphrag.settings import SearchSettings
from graphrag.timing import elapsed_ms

__all__ = ["GraphSource", "retrieve", "seed_passages"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GraphSource:
    """The graph store to rank through, and the entity names a model found in the question."""

    store: GraphStore
    entities: Sequence[str] = ()


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
            self.ms[name] = self.ms.get(name, 0.0) + elapsed_ms(start)

    def timings(self) -> StageTimings:
        return StageTimings(**{f"{name}_ms": round(ms, 3) for name, ms in self.ms.items()})


def _embed(embedder: Embedder, request: RetrievalRequest, clock: _Clock) -> list[float] | None:
    """The question's vector, when vector search runs (the graph embeds the names it needs
    itself, only those it did not find exactly)."""
    if not (request.use_vector and any(s.vector for s in request.scopes)):
        return None
    with clock.stage("embed"):
        return embedder.embed_query(request.query)


def _run_vector(
    session: Session,
    settings: SearchSettings,
    request: RetrievalRequest,
    query_vector: list[float] | None,
    clock: _Clock,
) -> list[ScoredChunk] | None:
    kb_ids = [s.kb_id for s in request.scopes if s.vector]
    if query_vector is None or not kb_ids:
        return None
    with clock.stage("vector"):
        chunks = ChunkQuery(kb_ids, request.knowledge_ids, request.vector_threshold, request.top_k)
        return vector_search(session, settings, query_vector, chunks)


def _run_keyword(
    session: Session, settings: SearchSettings, request: RetrievalRequest, clock: _Clock
) -> list[ScoredChunk] | None:
    kb_ids = [s.kb_id for s in request.scopes if s.keyword]
    if not (request.use_keyword and kb_ids):
        return None
    with clock.stage("keyword"):
        chunks = ChunkQuery(kb_ids, request.knowledge_ids, request.keyword_threshold, request.top_k)
        if settings.keyword_match == "any":
            return keyword_search_any(
                session,
                request.query,
                chunks,
                max_terms=settings.keyword_max_terms,
                common_df=settings.keyword_common_df,
            )
        return keyword_search(session, request.query, chunks)


def _graph_query(request: RetrievalRequest, graph: GraphSource | None) -> GraphQuery | None:
    kb_ids = [s.kb_id for s in request.scopes if s.graph_on]
    if graph is None or not (request.use_graph and kb_ids):
        return None
    return GraphQuery(
        question=request.query,
        kb_ids=kb_ids,
        entities=graph.entities,
        knowledge_ids=request.knowledge_ids,
    )


def _graph_ranking(
    store: GraphStore, settings: SearchSettings, query: GraphQuery
) -> GraphRanking | None:
    try:
        return rank_in_graph(store, settings, query)
    except (GraphStoreError, EmbeddingError) as exc:
        # The graph adds to the other methods: when it cannot be read, they still answer.
        log.warning("graph ranking skipped: %s", exc.message)
        return None


def seed_passages(
    session: Session, hybrid: Sequence[SearchHit], query: GraphQuery, settings: SearchSettings
) -> list[SeedPassage]:
    """The best hits of the vector + keyword fusion in graph-enabled bases, with the entity
    keys their extraction read: the graph walk starts there as well as at the question's
    entities."""
    if settings.graph.passage_seed_weight <= 0:
        return []
    in_graph = set(query.kb_ids)
    best = [h for h in hybrid if h.kb_id in in_graph][: settings.graph.passage_seeds]
    keys = chunk_entity_keys(session, [h.chunk_id for h in best])
    return [SeedPassage(h.kb_id, h.chunk_id, tuple(keys.get(h.chunk_id, ()))) for h in best]


def retrieve(
    session: Session,
    embedder: Embedder,
    settings: SearchSettings,
    request: RetrievalRequest,
    graph: GraphSource | None = None,
) -> RetrievalResult:
    """Run the allowed methods, fuse by weighted RRF and keep `top_k`. With the graph, the
    vector + keyword fusion comes first: its best passages seed the graph ranking, whose list
    is then fused with the other two."""
    clock = _Clock()
    query = _graph_query(request, graph)
    weights = FusionWeights(
        k=settings.rrf_k,
        vector=settings.vector_weight,
        keyword=settings.keyword_weight,
        graph=settings.graph.weight,
    )
    with clock.stage("total"):
        query_vector = _embed(embedder, request, clock)
        unsearchable = 0
        if query_vector is not None and not searchable(query_vector):
            # A zero vector finds nothing (its cosine is undefined): no vector search, counted.
            skip_unsearchable(VectorUse.QUERY, 1)
            query_vector, unsearchable = None, 1
        vector_hits = _run_vector(session, settings, request, query_vector, clock)
        keyword_hits = _run_keyword(session, settings, request, clock)
        ranking = None
        if graph is not None and query is not None:
            with clock.stage("graph"):
                hybrid = fuse(vector_hits or [], keyword_hits or [], weights)
                query = replace(
                    query,
                    embed_names=embedder.embed,
                    passages=seed_passages(session, hybrid, query, settings),
                )
                ranking = _graph_ranking(graph.store, settings, query)
                if ranking is not None:
                    ranking = visible_graph_hits(session, ranking, query, settings, query_vector)
        with clock.stage("fusion"):
            graph_list = ranking.hits if ranking is not None else []
            fused = fuse(vector_hits or [], keyword_hits or [], weights, graph_list)
    timings = clock.timings()
    if ranking is not None:
        timings = timings.model_copy(
            update={
                "graph_read_ms": round(ranking.read_ms, 3),
                "graph_rank_ms": round(ranking.rank_ms, 3),
            }
        )
    return RetrievalResult(
        hits=fused[: request.top_k],
        vector_used=vector_hits is not None,
        keyword_used=keyword_hits is not None,
        graph_used=ranking is not None,
        vector_candidates=len(vector_hits or []),
        keyword_candidates=len(keyword_hits or []),
        graph_candidates=len(ranking.hits) if ranking is not None else 0,
        graph_seeds=ranking.seeds if ranking is not None else [],
        graph_truncated=ranking.truncated if ranking is not None else False,
        unsearchable_vectors=unsearchable
        + (ranking.unsearchable_vectors if ranking is not None else 0),
        timings=timings,
    )
