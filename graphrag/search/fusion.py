"""Weighted reciprocal-rank fusion of the vector, keyword and graph result lists.

A chunk's fused score is the sum, over the lists that hold it, of `weight / (k + rank)` with
1-based ranks. Only ranks count, so the methods' scores (cosine similarity, text rank, graph
propagation score) never need a common scale; each hit still carries them for display and
debugging.

Ties are broken stably: hits with equal fused scores keep the order in which they were first
seen, reading the vector list first, then the keyword list, then the graph list. The same inputs
always give the same order.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from graphrag.search.models import GraphContribution, MatchType, ScoredChunk, SearchHit

__all__ = ["FusionWeights", "GraphListHit", "fuse"]


@dataclass(frozen=True)
class FusionWeights:
    """RRF constant `k` and the weight of each method."""

    k: int
    vector: float
    keyword: float
    graph: float = 0.0


@dataclass(frozen=True)
class GraphListHit:
    """A chunk of the graph list with how the graph reached it."""

    chunk: ScoredChunk
    contribution: GraphContribution


@dataclass
class _Entry:
    chunk: ScoredChunk
    score: float = 0.0
    methods: dict[MatchType, tuple[float, int]] = field(default_factory=dict)
    graph: GraphContribution | None = None


def _ranked(hits: Sequence[ScoredChunk]) -> list[tuple[int, ScoredChunk]]:
    """1-based ranks in list order; a chunk listed twice keeps its first (best) place."""
    seen: set[uuid.UUID] = set()
    ranked: list[tuple[int, ScoredChunk]] = []
    for hit in hits:
        if hit.chunk_id not in seen:
            seen.add(hit.chunk_id)
            ranked.append((len(ranked) + 1, hit))
    return ranked


def _hit(entry: _Entry, rank: int) -> SearchHit:
    base = entry.chunk.model_dump(exclude={"score"})
    vector = entry.methods.get(MatchType.VECTOR)
    keyword = entry.methods.get(MatchType.KEYWORD)
    match_type = next(iter(entry.methods)) if len(entry.methods) == 1 else MatchType.HYBRID
    return SearchHit(
        **base,
        score=entry.score,
        rank=rank,
        match_type=match_type,
        vector_score=vector[0] if vector is not None else None,
        vector_rank=vector[1] if vector is not None else None,
        keyword_score=keyword[0] if keyword is not None else None,
        keyword_rank=keyword[1] if keyword is not None else None,
        graph=entry.graph,
    )


def fuse(
    vector: Sequence[ScoredChunk],
    keyword: Sequence[ScoredChunk],
    weights: FusionWeights,
    graph: Sequence[GraphListHit] = (),
) -> list[SearchHit]:
    """Every chunk of any list once, best fused score first, ranks numbered from 1.

    Each input list must be ordered best first, as the search methods return it.
    """
    entries: dict[uuid.UUID, _Entry] = {}
    for method, hits, weight in (
        (MatchType.VECTOR, vector, weights.vector),
        (MatchType.KEYWORD, keyword, weights.keyword),
        (MatchType.GRAPH, [g.chunk for g in graph], weights.graph),
    ):
        for rank, hit in _ranked(hits):
            entry = entries.setdefault(hit.chunk_id, _Entry(chunk=hit))
            entry.methods[method] = (hit.score, rank)
            entry.score += weight / (weights.k + rank)
    for item in graph:
        entry = entries[item.chunk.chunk_id]
        if entry.graph is None:
            entry.graph = item.contribution
    # sorted() is stable: equal scores keep dict insertion order (vector, keyword, graph).
    ordered = sorted(entries.values(), key=lambda e: -e.score)
    return [_hit(entry, rank) for rank, entry in enumerate(ordered, start=1)]
