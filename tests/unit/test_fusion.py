"""Weighted reciprocal-rank fusion: exact scores, ranks, weights, ties, empty inputs."""

from __future__ import annotations

import uuid

import pytest

from graphrag.search.fusion import FusionWeights, GraphListHit, fuse
from graphrag.search.models import GraphContribution, MatchType, ScoredChunk

pytestmark = pytest.mark.unit

KB = uuid.UUID(int=1)
DOC = uuid.UUID(int=2)
WEIGHTS = FusionWeights(k=60, vector=0.7, keyword=0.3)


def chunk(n: int, score: float = 0.5) -> ScoredChunk:
    return ScoredChunk(
        chunk_id=uuid.UUID(int=100 + n),
        knowledge_id=DOC,
        kb_id=KB,
        seq=n,
        page=None,
        chunk_type="text",
        content=f"chunk {n}",
        file_name="doc.txt",
        score=score,
    )


def test_empty_lists_give_no_hits() -> None:
    assert fuse([], [], WEIGHTS) == []


def test_single_list_keeps_order_and_exact_scores() -> None:
    hits = fuse([chunk(1, 0.9), chunk(2, 0.8), chunk(3, 0.4)], [], WEIGHTS)
    assert [h.seq for h in hits] == [1, 2, 3]
    assert [h.rank for h in hits] == [1, 2, 3]
    assert [h.score for h in hits] == [0.7 / 61, 0.7 / 62, 0.7 / 63]
    assert all(h.match_type is MatchType.VECTOR for h in hits)
    assert [h.vector_score for h in hits] == [0.9, 0.8, 0.4]
    assert [h.vector_rank for h in hits] == [1, 2, 3]
    assert all(h.keyword_score is None and h.keyword_rank is None for h in hits)


def test_keyword_only_hits_are_keyword_matches() -> None:
    hits = fuse([], [chunk(7, 0.6)], WEIGHTS)
    assert len(hits) == 1
    hit = hits[0]
    assert hit.match_type is MatchType.KEYWORD
    assert hit.score == 0.3 / 61
    assert (hit.keyword_score, hit.keyword_rank) == (0.6, 1)
    assert hit.vector_score is None and hit.vector_rank is None


def test_chunk_in_both_lists_sums_and_is_hybrid() -> None:
    vector = [chunk(1, 0.9), chunk(2, 0.7)]
    keyword = [chunk(2, 0.8), chunk(3, 0.5)]
    hits = fuse(vector, keyword, WEIGHTS)
    by_seq = {h.seq: h for h in hits}
    assert by_seq[2].match_type is MatchType.HYBRID
    assert by_seq[2].score == 0.7 / 62 + 0.3 / 61
    assert (by_seq[2].vector_rank, by_seq[2].keyword_rank) == (2, 1)
    assert (by_seq[2].vector_score, by_seq[2].keyword_score) == (0.7, 0.8)
    # 0.7/62 + 0.3/61 > 0.7/61 > 0.3/62: the hybrid chunk overtakes the vector leader.
    assert [h.seq for h in hits] == [2, 1, 3]
    assert [h.rank for h in hits] == [1, 2, 3]


def test_weights_decide_between_single_method_leaders() -> None:
    keyword_heavy = FusionWeights(k=60, vector=0.2, keyword=0.8)
    hits = fuse([chunk(1)], [chunk(2)], keyword_heavy)
    assert [h.seq for h in hits] == [2, 1]
    assert [h.score for h in hits] == [0.8 / 61, 0.2 / 61]


def test_k_flattens_or_sharpens_rank_differences() -> None:
    sharp = fuse([chunk(1), chunk(2)], [], FusionWeights(k=0, vector=1.0, keyword=1.0))
    assert [h.score for h in sharp] == [1.0, 0.5]
    flat = fuse([chunk(1), chunk(2)], [], FusionWeights(k=1000, vector=1.0, keyword=1.0))
    assert [h.score for h in flat] == [1.0 / 1001, 1.0 / 1002]


def test_equal_scores_keep_first_seen_order() -> None:
    even = FusionWeights(k=60, vector=0.5, keyword=0.5)
    hits = fuse([chunk(5)], [chunk(4)], even)
    assert hits[0].score == hits[1].score
    assert [h.seq for h in hits] == [5, 4]  # vector list read first
    hits = fuse([chunk(4)], [chunk(5)], even)
    assert [h.seq for h in hits] == [4, 5]


def test_fusion_is_deterministic() -> None:
    vector = [chunk(i) for i in range(10)]
    keyword = [chunk(i) for i in (9, 3, 12, 0, 11)]
    first = fuse(vector, keyword, WEIGHTS)
    assert fuse(vector, keyword, WEIGHTS) == first
    assert len(first) == 12
    assert [h.rank for h in first] == list(range(1, 13))
    assert [h.score for h in first] == sorted((h.score for h in first), reverse=True)


def test_duplicate_in_one_list_keeps_its_best_rank() -> None:
    hits = fuse([chunk(1, 0.9), chunk(2, 0.8), chunk(1, 0.1)], [], WEIGHTS)
    assert [h.seq for h in hits] == [1, 2]
    assert (hits[0].vector_rank, hits[0].vector_score) == (1, 0.9)
    assert hits[1].vector_rank == 2
    assert hits[1].score == 0.7 / 62


def test_zero_weight_method_still_marks_the_match() -> None:
    hits = fuse([chunk(1)], [chunk(1), chunk(2)], FusionWeights(k=60, vector=1.0, keyword=0.0))
    assert [h.seq for h in hits] == [1, 2]
    assert hits[0].match_type is MatchType.HYBRID
    assert hits[0].score == 1.0 / 61
    assert hits[1].score == 0.0 and hits[1].match_type is MatchType.KEYWORD


def test_hits_carry_the_chunk_fields() -> None:
    (hit,) = fuse([chunk(3)], [], WEIGHTS)
    source = chunk(3)
    assert hit.chunk_id == source.chunk_id
    assert (hit.knowledge_id, hit.kb_id, hit.file_name) == (DOC, KB, "doc.txt")
    assert (hit.seq, hit.page, hit.chunk_type, hit.content) == (3, None, "text", "chunk 3")


def _graph_hit(n: int, rank: int) -> GraphListHit:
    contribution = GraphContribution(score=0.1, rank=rank, seeds=["X"], path=["X"])
    return GraphListHit(chunk(n, 0.1), contribution)


def test_graph_list_is_a_third_weighted_list() -> None:
    weights = FusionWeights(k=60, vector=0.7, keyword=0.3, graph=0.5)
    hits = fuse([chunk(1), chunk(2)], [], weights, [_graph_hit(2, 1), _graph_hit(3, 2)])
    by_seq = {h.seq: h for h in hits}
    assert by_seq[2].score == pytest.approx(0.7 / 62 + 0.5 / 61)
    assert by_seq[2].match_type is MatchType.HYBRID
    assert by_seq[3].match_type is MatchType.GRAPH and by_seq[3].score == pytest.approx(0.5 / 62)
    assert by_seq[1].graph is None and by_seq[2].graph is not None
    assert [h.seq for h in hits] == [2, 1, 3]


def test_a_chunk_only_the_graph_supports_can_rank_first() -> None:
    weights = FusionWeights(k=60, vector=0.7, keyword=0.3, graph=1.0)
    hits = fuse([chunk(1)], [], weights, [_graph_hit(9, 1)])
    assert hits[0].seq == 9 and hits[0].graph is not None and hits[0].graph.path == ["X"]
