"""Near-duplicate filtering of new facts: a read-only probe of the archive, plus the batch.

A fact is a duplicate when its cosine similarity to a stored fact of the owner, or to a fact
kept earlier in the same batch, is above `dedup_similarity`. The probe reads only: access
counts and last-access times of the stored facts do not move.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np

from graphrag.memory.archive import MemoryArchive
from graphrag.memory.records import MemoryOwner, NewFact, SimilarFact

__all__ = ["KeptFact", "cosine", "filter_duplicates", "nearest_stored"]

KeptFact = tuple[uuid.UUID, NewFact, list[float]]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0 when one is null)."""
    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norm = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(va @ vb) / norm if norm else 0.0


def nearest_stored(
    archive: MemoryArchive, owner: MemoryOwner, vector: Sequence[float]
) -> SimilarFact | None:
    """The owner's stored fact most similar to `vector` (read-only), or None."""
    hits = archive.nearest(owner, vector, 1)
    return hits[0] if hits else None


def filter_duplicates(
    archive: MemoryArchive,
    owner: MemoryOwner,
    facts: Sequence[NewFact],
    vectors: Sequence[Sequence[float]],
    threshold: float,
) -> tuple[list[KeptFact], int]:
    """The facts worth storing, each with a new id and its vector; and how many were dropped."""
    kept: list[KeptFact] = []
    duplicates = 0
    for fact, vector in zip(facts, vectors, strict=True):
        stored = nearest_stored(archive, owner, vector)
        if stored is not None and stored.similarity > threshold:
            duplicates += 1
            continue
        if any(cosine(vector, other) > threshold for _, _, other in kept):
            duplicates += 1
            continue
        kept.append((uuid.uuid4(), fact, list(vector)))
    return kept, duplicates
