"""Passages for a prompt: neighbouring chunks of one document that both rank become one.

Chunks are cut with an overlap, so two neighbours repeat a few words; joined, they read as one
paragraph and take one place in the prompt. The passage keeps every chunk it holds, so the
references still name each one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from graphrag.search.models import SearchHit

__all__ = ["Passage", "join_neighbours", "join_overlapping"]


@dataclass
class Passage:
    """Hits of one document with consecutive `seq`, placed where its best hit ranks."""

    hits: list[SearchHit] = field(default_factory=list)
    text: str = ""

    def touches(self, hit: SearchHit) -> bool:
        """Whether the hit is the chunk right before or after this passage in its document."""
        first, last = self.hits[0], self.hits[-1]
        return (
            hit.knowledge_id == first.knowledge_id
            and hit.chunk_type == first.chunk_type
            and hit.seq in (first.seq - 1, last.seq + 1)
        )


def join_overlapping(left: str, right: str, max_overlap: int) -> str:
    """`left` then `right`, without the longest end of `left` (at most `max_overlap`
    characters) that `right` starts with."""
    longest = min(max_overlap, len(left), len(right))
    for size in range(longest, 0, -1):
        if left.endswith(right[:size]):
            return left + right[size:]
    separator = "" if left.endswith((" ", "\n")) or right.startswith((" ", "\n")) else " "
    return left + separator + right


def join_neighbours(hits: Sequence[SearchHit], max_overlap: int) -> list[Passage]:
    """Hits grouped into passages, in the order of each passage's best-ranked hit."""
    passages: list[Passage] = []
    for hit in hits:
        home = next((p for p in passages if p.touches(hit)), None)
        if home is None:
            passages.append(Passage(hits=[hit]))
            continue
        home.hits.append(hit)
        home.hits.sort(key=lambda h: h.seq)
    for passage in passages:
        text = passage.hits[0].content.strip()
        for hit in passage.hits[1:]:
            text = join_overlapping(text, hit.content.strip(), max_overlap)
        passage.text = text
    return passages
