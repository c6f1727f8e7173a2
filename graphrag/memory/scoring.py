"""The composite recall score, as pure functions of a fact, its similarity and the time.

score = w_sim * similarity + w_imp * importance + w_rec * recency + w_freq * frequency, with
recency = exp(-elapsed / recency_decay_s), elapsed being the true number of seconds since the
fact was last accessed (epoch arithmetic), and frequency = min(access_count, cap) / cap.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from graphrag.memory.clock import MS_PER_S
from graphrag.memory.records import MemoryFact, ScoredFact, SimilarFact
from graphrag.settings import MemorySettings

__all__ = ["elapsed_seconds", "frequency", "rank_facts", "recency", "score_fact"]


def elapsed_seconds(since_ms: int, now_ms: int) -> float:
    """Seconds from `since_ms` to `now_ms` (never negative: a clock step back is no boost)."""
    return max(now_ms - since_ms, 0) / MS_PER_S


def recency(elapsed_s: float, decay_s: float) -> float:
    """1.0 just after an access, 1/e after `decay_s` seconds, towards 0 after."""
    return math.exp(-max(elapsed_s, 0.0) / decay_s)


def frequency(access_count: int, cap: int) -> float:
    """Access count capped at `cap` and scaled to 0..1."""
    return min(max(access_count, 0), cap) / cap


def score_fact(
    fact: MemoryFact, similarity: float, now_ms: int, settings: MemorySettings
) -> ScoredFact:
    """The composite score of `fact` for a query it matches with `similarity`."""
    rec = recency(elapsed_seconds(fact.last_access, now_ms), settings.recency_decay_s)
    freq = frequency(fact.access_count, settings.frequency_cap)
    score = (
        settings.weight_similarity * similarity
        + settings.weight_importance * fact.importance
        + settings.weight_recency * rec
        + settings.weight_frequency * freq
    )
    return ScoredFact(fact=fact, similarity=similarity, recency=rec, frequency=freq, score=score)


def rank_facts(
    candidates: Iterable[SimilarFact],
    now_ms: int,
    settings: MemorySettings,
    k: int,
    *,
    min_similarity: float | None,
) -> list[ScoredFact]:
    """The best `k` candidates by score (ties: newer first, then id), after the similarity floor.

    `min_similarity` None keeps every candidate (facts reached through the entity graph are
    relevant by their link, not by their wording).
    """
    scored = [
        score_fact(c.fact, c.similarity, now_ms, settings)
        for c in candidates
        if min_similarity is None or c.similarity >= min_similarity
    ]
    scored.sort(key=lambda s: (-s.score, -s.fact.created_at, str(s.fact.id)))
    return scored[:k]
