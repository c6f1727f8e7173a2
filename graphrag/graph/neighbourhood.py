"""The subgraph around a question's name keys, as the graph store reads it for ranking.

Rows are per document node: the key it is linked to at base level, how that key was found, its
chunks and its related entities (with their own keys and chunks). Ranking code turns them into an
entity/chunk graph.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "KeyInstance",
    "KeyMatch",
    "MatchKind",
    "NameMatching",
    "NeighbourLink",
    "NeighbourhoodLimits",
    "PassageRef",
    "key_instance",
]


@dataclass(frozen=True)
class NeighbourhoodLimits:
    """Caps of one neighbourhood read: nodes per key, neighbours per node, chunks per node."""

    max_instances: int
    max_neighbours: int
    max_chunks: int
    follow_resolution: bool = False  # a key's nodes bring their resolved entities' other nodes


@dataclass(frozen=True)
class PassageRef:
    """A passage whose entities the read should also find: a chunk and the name keys of the
    entities read in it."""

    chunk_id: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class NameMatching:
    """Keys found in the same read beyond the exact ones: those holding every word of a name
    (full-text index), those whose name vector is near a name's vector (vector index), and those
    of the entities read in given passages."""

    names: Sequence[str] = ()
    word_limit: int = 0  # keys per name; 0: no word matches
    vectors: Mapping[str, Sequence[float]] = field(default_factory=dict)
    vector_limit: int = 0  # keys per name; 0: no near matches
    vector_probe: int = 0  # candidates read from the shared index before the base filter
    vector_threshold: float = 1.0
    passages: Sequence[PassageRef] = ()
    passage_max_documents: int = 0  # a passage's key named in more documents is not followed


class MatchKind(StrEnum):
    WORDS = "words"
    VECTOR = "vector"
    PASSAGE = "passage"  # `name` is the passage's chunk id


@dataclass(frozen=True)
class KeyMatch:
    """How a question's name found a key that is not one of its exact keys."""

    kind: MatchKind
    name: str
    score: float  # vector similarity; 1.0 for a word match


@dataclass(frozen=True)
class NeighbourLink:
    """An entity related to a document node, through one relation."""

    key: str
    name: str
    type: str
    chunks: tuple[str, ...]
    outgoing: bool = True  # the relation goes from the document node to this entity


@dataclass(frozen=True)
class KeyInstance:
    """One document node of a name key: where it was read and what it is related to."""

    key: str
    instances: int  # document nodes linked to the key in the whole base
    name: str
    kg: str
    chunks: tuple[str, ...]
    neighbours: tuple[NeighbourLink, ...]
    matches: tuple[KeyMatch, ...] = ()  # empty: found as an exact key only


def key_instance(row: dict[str, Any]) -> KeyInstance:
    """A row of the neighbourhood query as a model."""
    return KeyInstance(
        key=str(row["key"]),
        instances=int(row["instances"]),
        name=str(row["name"]),
        kg=str(row["kg"]),
        chunks=tuple(str(c) for c in row.get("chunks") or []),
        neighbours=tuple(
            NeighbourLink(
                key=str(link.get("key") or ""),
                name=str(link["name"]),
                type=str(link["type"]),
                chunks=tuple(str(c) for c in link.get("chunks") or []),
                outgoing=bool(link.get("outgoing", True)),
            )
            for link in row.get("neighbours") or []
        ),
        matches=tuple(
            KeyMatch(MatchKind(m["kind"]), str(m["name"]), float(m["score"]))
            for m in row.get("via") or []
        ),
    )
