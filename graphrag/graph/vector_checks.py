"""Vectors a similarity index can take, checked before one is sent or stored.

Cosine similarity divides by the vector's norm: Neo4j's vector indexes refuse a query vector
without a positive finite norm (the whole query fails), and pgvector's cosine distance of a zero
vector is NaN. An OpenAI-compatible embedding server may answer all zeros (for a name made only
of stop words, an empty text) or, broken, non-finite values: such a vector is skipped, and
counted (`graphrag_unsearchable_vectors_total{use}`), never sent.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import TypeVar

from graphrag.metrics import unsearchable_vector_counter

__all__ = ["VectorUse", "searchable", "searchable_only", "skip_unsearchable"]

log = logging.getLogger(__name__)

K = TypeVar("K")


class VectorUse(StrEnum):
    """What a skipped vector was for: the counter's label."""

    QUERY = "query"  # a question's vector for the chunk search
    NAME_QUERY = "name_query"  # a question's entity name, for near name matches
    ENTITY_NAME = "entity_name"  # a base entity's name vector, at graph build
    CHUNK = "chunk"  # a chunk's vector, at ingestion
    MEMORY_QUERY = "memory_query"  # a memory recall's probe
    MEMORY_FACT = "memory_fact"  # an archival fact's vector


def searchable(vector: Sequence[float]) -> bool:
    """Whether a cosine index can take `vector`: not empty, every component finite and the norm
    positive and finite (squares that overflow or all underflow to zero are refused too)."""
    if not vector or not all(math.isfinite(x) for x in vector):
        return False
    squares = math.fsum(x * x for x in vector)
    return 0.0 < squares < math.inf


def skip_unsearchable(use: VectorUse, count: int) -> None:
    """Count `count` vectors skipped for `use` (and log it once per call)."""
    if count:
        unsearchable_vector_counter().labels(use=use.value).inc(count)
        log.warning("%d %s vector(s) without a positive finite norm skipped", count, use.value)


def searchable_only(
    use: VectorUse, vectors: Mapping[K, Sequence[float]]
) -> dict[K, Sequence[float]]:
    """The entries of `vectors` whose vector is searchable; the others are counted for `use`."""
    kept = {key: vector for key, vector in vectors.items() if searchable(vector)}
    skip_unsearchable(use, len(vectors) - len(kept))
    return kept
