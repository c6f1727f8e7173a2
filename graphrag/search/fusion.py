"""Weighted reciprocal-rank fusion of the vector and keyword result lists.

A chunk's fused score is the sum, over the lists that hold it, of `weight / (k + rank)` with
1-based ranks. Only ranks count, so the two methods' scores (cosine similarity, text rank)
never need a common scale; each hit still carries them for display and debugging.

Ties are broken stably: hits with equal fused scores keep the order in which they were first
seen, reading the vector list first, then the keyword list. The same inputs always give the
same order.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from graphrag.search.models import MatchType, ScoredChunk, SearchHit

__all__ = ["FusionWeights", "fuse"]


@dataclass(frozen=True)
class FusionWeights:
    """RRF constant `k` and the weight of each method."""

    k: int
    vector: float
    keyword: float


@dataclass
class _Entry:
    chunk: ScoredChunk
    score: float = 0.0
    vector: tuple[float, int] | None = None  # (method score, rank)
    keyword: tuple[float, int] | None = None


def _ranked(hits: Sequence[ScoredChunk]) -> list[tuple[int, ScoredChunk]]:
    """1-based ranks in list order; a chunk listed twice keeps its first (best) place."""
    seen: set[uuid.UUID] = set()
    ranked: list[tuple[int, ScoredChunk]] = []
    for hit in hits:
        if hit.chunk_id not in seen:
            seen.add(hit.chunk_id)
            ranked.append((len(ranked) + 1, hit))
    return ranked


def _match_type(entry: _Entry) -> MatchType:
    if entry.vector is not None and entry.keyword is not None:
        return MatchType.HYBRID
    return MatchType.VECTOR if entry.vector is not None else MatchType.KEYWORD


def _hit(entry: _Entry, rank: int) -> SearchHit:
    base = entry.chunk.model_dump(exclude={"score"})
    return SearchHit(
        **base,
        score=entry.score,
        rank=rank,
        match_type=_match_type(entry),
        vector_score=entry.vector[0] if entry.vector is not None else None,
        vector_rank=entry.vector[1] if entry.vector is not None else None,
        keyword_score=entry.keyword[0] if entry.keyword is not None else None,
        keyword_rank=entry.keyword[1] if entry.keyword is not None else None,
    )


def fuse(
    vector: Sequence[ScoredChunk], keyword: Sequence[ScoredChunk], weights: FusionWeights
) -> list[SearchHit]:
    """Every chunk of either list once, best fused score first, ranks numbered from 1.

    Each input list must be ordered best first, as the search methods return it.
    """
    entries: dict[uuid.UUID, _Entry] = {}
    for rank, hit in _ranked(vector):
        entry = entries.setdefault(hit.chunk_id, _Entry(chunk=hit))
        entry.vector = (hit.score, rank)
        entry.score += weights.vector / (weights.k + rank)
    for rank, hit in _ranked(keyword):
        entry = entries.setdefault(hit.chunk_id, _Entry(chunk=hit))
        entry.keyword = (hit.score, rank)
        entry.score += weights.keyword / (weights.k + rank)
    # sorted() is stable: equal scores keep dict insertion order (vector list, then keyword).
    ordered = sorted(entries.values(), key=lambda e: -e.score)
    return [_hit(entry, rank) for rank, entry in enumerate(ordered, start=1)]
