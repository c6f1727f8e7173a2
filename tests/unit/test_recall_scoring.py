"""The composite recall score: weights, true elapsed time, frequency cap, similarity floor."""

from __future__ import annotations

import math
import uuid

import pytest

from graphrag.memory.records import FactKind, MemoryFact, SimilarFact
from graphrag.memory.scoring import elapsed_seconds, frequency, rank_facts, recency, score_fact
from graphrag.settings import MemorySettings, get_settings

pytestmark = pytest.mark.unit

DAY_MS = 86_400_000
NOW = 1_800_000_000_000  # an epoch-ms instant in 2027


@pytest.fixture(scope="module")
def memory() -> MemorySettings:
    return get_settings().memory


def _fact(*, last_access: int, access_count: int = 0, importance: float = 0.5) -> MemoryFact:
    return MemoryFact(
        id=uuid.uuid4(),
        text="fact",
        kind=FactKind.NOTE,
        importance=importance,
        created_at=last_access,
        last_access=last_access,
        access_count=access_count,
    )


def test_configured_weights_are_the_specified_ones(memory: MemorySettings) -> None:
    weights = (
        memory.weight_similarity,
        memory.weight_importance,
        memory.weight_recency,
        memory.weight_frequency,
    )
    assert weights == (0.55, 0.15, 0.15, 0.15)
    assert (memory.frequency_cap, memory.min_similarity) == (20, 0.3)


def test_elapsed_time_is_the_total_not_a_component() -> None:
    # One day and five seconds: a seconds *component* would say 5.
    assert elapsed_seconds(NOW, NOW + DAY_MS + 5_000) == 86_405
    assert elapsed_seconds(NOW, NOW - 1_000) == 0  # a clock stepping back gives no boost


def test_recency_decays_exponentially_over_days(memory: MemorySettings) -> None:
    decay = memory.recency_decay_s
    values = [recency(days * 86_400, decay) for days in (0, 1, 7, 30)]
    assert values[0] == 1.0
    assert values == sorted(values, reverse=True)
    assert len(set(values)) == 4
    assert values[1] == pytest.approx(math.exp(-86_400 / decay))


def test_frequency_is_capped_and_normalised() -> None:
    assert frequency(0, 20) == 0.0
    assert frequency(10, 20) == 0.5
    assert frequency(20, 20) == frequency(500, 20) == 1.0


def test_score_is_the_weighted_sum(memory: MemorySettings) -> None:
    fact = _fact(last_access=NOW - 2 * DAY_MS, access_count=5, importance=0.8)
    scored = score_fact(fact, 0.7, NOW, memory)
    rec = math.exp(-2 * 86_400 / memory.recency_decay_s)
    expected = 0.55 * 0.7 + 0.15 * 0.8 + 0.15 * rec + 0.15 * (5 / 20)
    assert scored.score == pytest.approx(expected)
    assert scored.recency == pytest.approx(rec)
    assert scored.frequency == 0.25


def test_the_same_fact_scores_lower_as_days_pass(memory: MemorySettings) -> None:
    fact = _fact(last_access=NOW)
    scores = [score_fact(fact, 0.6, NOW + days * DAY_MS, memory).score for days in (0, 3, 30)]
    assert scores[0] > scores[1] > scores[2]


def test_rank_applies_the_floor_and_orders_by_score(memory: MemorySettings) -> None:
    fresh = SimilarFact(fact=_fact(last_access=NOW), similarity=0.5)
    stale = SimilarFact(fact=_fact(last_access=NOW - 60 * DAY_MS), similarity=0.5)
    weak = SimilarFact(fact=_fact(last_access=NOW), similarity=0.29)
    ranked = rank_facts([stale, weak, fresh], NOW, memory, 10, min_similarity=0.3)
    assert [r.fact.id for r in ranked] == [fresh.fact.id, stale.fact.id]
    unfloored = rank_facts([stale, weak, fresh], NOW, memory, 10, min_similarity=None)
    assert {r.fact.id for r in unfloored} == {fresh.fact.id, stale.fact.id, weak.fact.id}
    assert len(rank_facts([stale, weak, fresh], NOW, memory, 1, min_similarity=0.3)) == 1


def test_frequent_access_lifts_a_fact(memory: MemorySettings) -> None:
    rare = SimilarFact(fact=_fact(last_access=NOW, access_count=0), similarity=0.6)
    often = SimilarFact(fact=_fact(last_access=NOW, access_count=20), similarity=0.6)
    ranked = rank_facts([rare, often], NOW, memory, 2, min_similarity=0.3)
    assert ranked[0].fact.id == often.fact.id
