"""Neighbouring chunks of one document join into one passage; others stay apart."""

from __future__ import annotations

import uuid

import pytest

from graphrag.search.models import MatchType, SearchHit
from graphrag.search.passages import join_neighbours, join_overlapping

pytestmark = pytest.mark.unit

DOC_A, DOC_B, KB = uuid.UUID(int=1), uuid.UUID(int=2), uuid.UUID(int=3)


def hit(doc: uuid.UUID, seq: int, content: str, rank: int) -> SearchHit:
    return SearchHit(
        chunk_id=uuid.UUID(int=1000 * doc.int + seq),
        knowledge_id=doc,
        kb_id=KB,
        seq=seq,
        page=None,
        chunk_type="text",
        content=content,
        file_name="f.txt",
        score=1.0 / rank,
        rank=rank,
        match_type=MatchType.VECTOR,
    )


def test_overlap_is_removed_once() -> None:
    assert join_overlapping("the quick brown fox", "brown fox jumps", 20) == (
        "the quick brown fox jumps"
    )
    assert join_overlapping("alpha", "beta", 20) == "alpha beta"
    assert join_overlapping("abcdef", "defgh", 2) == "abcdef defgh"  # overlap longer than allowed


def test_neighbours_join_and_keep_every_chunk_in_document_order() -> None:
    hits = [
        hit(DOC_A, 2, "second part of A", 1),
        hit(DOC_B, 0, "B alone", 2),
        hit(DOC_A, 1, "first part of A second", 3),
        hit(DOC_A, 5, "far part of A", 4),
    ]
    passages = join_neighbours(hits, 50)
    assert [[h.seq for h in p.hits] for p in passages] == [[1, 2], [0], [5]]
    assert passages[0].text == "first part of A second part of A"
    assert passages[1].hits[0].knowledge_id == DOC_B


def test_same_seq_in_two_documents_stays_apart() -> None:
    passages = join_neighbours([hit(DOC_A, 0, "a", 1), hit(DOC_B, 1, "b", 2)], 10)
    assert len(passages) == 2
