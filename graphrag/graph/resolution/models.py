"""What resolution reads and decides: an entity of the document, a candidate, their evidence."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from graphrag.graph.resolution.name_match import NameRelation

__all__ = ["RESOLVED_TOKEN", "Candidate", "Decision", "EntityProfile", "Evidence", "Verdict"]

# In neighbour sets, beside a neighbour's key: `@` and the id of its resolved entity.
RESOLVED_TOKEN = "@"


@dataclass(frozen=True)
class EntityProfile:
    """One document node to resolve: its name, key words, what is said of it, its neighbours."""

    name: str
    key: str
    attributes: tuple[str, ...]
    neighbours: frozenset[str]  # name keys of the entities related to it, and `@<id>` of
    # their resolved entities
    # Relations of one type and direction with a single target in its document ("works_at>" ->
    # "acme corp"): what a different entity of the same name would contradict.
    single: tuple[tuple[str, str], ...] = ()
    related: tuple[tuple[str, str], ...] = ()  # (relation type and direction, key), for the model
    pinned_to: str | None = None  # an administrator's merge: the resolved entity it belongs to
    kept_from: frozenset[str] = frozenset()  # resolved entities an administrator split it from


@dataclass(frozen=True)
class Candidate:
    """A resolved entity of the base the profile may belong to, as far as it was read."""

    resolved_id: str
    name: str
    members: tuple[tuple[str, str], ...]  # (document, name) of its document nodes read
    attributes: tuple[str, ...]
    neighbours: frozenset[str]
    vector_score: float = 0.0  # cosine of the nearest member key's name vector, 0 if unknown
    single: tuple[tuple[tuple[str, str], ...], ...] = ()  # each member's single-target relations
    related: tuple[tuple[str, str], ...] = ()  # the members' relations, for the model


class Verdict(StrEnum):
    MERGE = "merge"  # the evidence is clear: the same entity
    APART = "apart"  # the same name, a different entity (a homonym): recorded, kept apart
    ASK = "ask"  # the rules cannot tell: the LLM decides (or, without it, no merge)
    NONE = "none"  # nothing links them


@dataclass(frozen=True)
class Evidence:
    """Everything the rules weigh for one (profile, candidate) pair."""

    relation: NameRelation
    name_similarity: float
    vector_score: float
    shared: frozenset[str]  # neighbour keys both have
    own_neighbours: int
    their_neighbours: int
    documents: tuple[str, ...]  # the candidate's documents whose names matched
    contradiction: str = ""  # a relation whose single target differs ("works_at>: a / b")
    # Every such difference may be one name written two ways ("orla labs" / "orla laboratories"):
    # a question for the model rather than two entities.
    contradiction_variant: bool = False
    # Relations of one type whose targets differ but may be one name written two ways: no
    # evidence for the rules, but what makes a pair worth the model's time.
    alike: int = 0
    # A member of the candidate with the same family name and other given names than the
    # entity's ("Marie Curie" for "Pierre Curie"), "" when none: a part of the name shared with
    # another member ("Curie") does not make them one.
    other_person: str = ""


@dataclass(frozen=True)
class Decision:
    """A rule's verdict on one pair, with the rule's name, a score and a sentence for the audit."""

    verdict: Verdict
    rule: str
    score: float
    reason: str
    documents: tuple[str, ...] = field(default=())
