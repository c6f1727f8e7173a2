"""The resolution rules: the evidence of a pair turned into merge, apart, ask or nothing.

Clear cases are decided here; the rest go to the LLM (`judge`), or stay apart without it.
- The same name (titles aside): merged, unless the two share no neighbour and a relation that
  has one target on each side points to different ones (works at Acme, works at the Boston
  Symphony): then the name is shared by two different entities (kept apart, or asked); when
  the differing targets may be one name written two ways ("Orla Labs", "Orla Laboratories"),
  the model is asked.
- An abbreviation, acronym, typo or part of the other's name: merged when they share a
  neighbour (a part, "Moreau" of "Ada Moreau", needs more: "Premier" is part of "Deputy
  Premier"); else asked (their neighbours may be written differently), unless their
  neighbourhoods contradict each other; without a model not merged.
- A part of a name is no link when another of the candidate's names has the same last word and
  other first words: "Curie" joined to "Marie Curie" does not bring "Pierre Curie" in, nor
  "Labs" joined to "Orla Labs" bring "Nexa Labs".
- Only near name vectors: asked when they share a neighbour.
"""

from __future__ import annotations

from graphrag.graph.resolution.models import RESOLVED_TOKEN, Decision, Evidence, Verdict
from graphrag.graph.resolution.name_match import NameRelation
from graphrag.settings import ResolutionSettings

__all__ = ["NEAR_NAME", "SAME_NAME_CONFLICT", "SAME_NAME_VARIANT", "decide", "strength"]

NEAR_NAME = "near_name"
SAME_NAME_CONFLICT = "same_name_conflict"  # a homonym: kept apart (asked with llm_asks_homonyms)
SAME_NAME_VARIANT = "same_name_variant"  # the differing targets may be one name: asked

# Name relations from the strongest; merges prefer the strongest relation, then more shared
# neighbours, then the closer name.
_ORDER = (
    NameRelation.SAME,
    NameRelation.INITIALS,
    NameRelation.ACRONYM,
    NameRelation.TYPO,
    NameRelation.PART,
    NameRelation.NONE,
)


def strength(evidence: Evidence) -> tuple[int, int, int, float, float]:
    """A sort key: the better-supported pair sorts first."""
    return (
        _ORDER.index(evidence.relation),
        -len(evidence.shared),
        -evidence.alike,
        -evidence.name_similarity,
        -evidence.vector_score,
    )


def _conflict(evidence: Evidence, settings: ResolutionSettings) -> bool:
    """No shared neighbour, enough neighbours on both sides, and a relation whose one target
    differs between them."""
    least = settings.conflict_min_neighbours
    return (
        not evidence.shared
        and bool(evidence.contradiction)
        and evidence.own_neighbours >= least
        and evidence.their_neighbours >= least
    )


def _confirmed(evidence: Evidence, settings: ResolutionSettings) -> bool:
    """Enough shared neighbours for a near name. A part of a name ("Moreau" of "Ada Moreau")
    needs more, or every neighbour of the side with fewer shared: "Premier" is also a part of
    "Deputy Premier", and the two share a state but not all their neighbours."""
    shared = len(evidence.shared)
    if evidence.relation is not NameRelation.PART:
        return shared >= settings.min_shared_neighbours
    keys = sum(1 for token in evidence.shared if not token.startswith(RESOLVED_TOKEN))
    fewer = min(evidence.own_neighbours, evidence.their_neighbours)
    return shared >= settings.part_min_shared_neighbours or (keys > 0 and keys >= fewer)


def _differs(evidence: Evidence) -> str:
    """The audit's words for a conflict."""
    return (
        f"no shared neighbour among {evidence.own_neighbours} and {evidence.their_neighbours}, "
        f"and {evidence.contradiction}"
    )


def decide(evidence: Evidence, settings: ResolutionSettings) -> Decision:
    """The rules' verdict on one pair (see the module)."""
    shared = len(evidence.shared)
    confirmed = shared >= settings.min_shared_neighbours
    relation = evidence.relation
    docs = evidence.documents
    conflict = _conflict(evidence, settings)
    if relation is NameRelation.SAME:
        if conflict and evidence.contradiction_variant:
            reason = f"same name, {_differs(evidence)}, which may be one name written two ways"
            return Decision(Verdict.ASK, SAME_NAME_VARIANT, 0.0, reason, docs)
        if conflict:
            reason = f"same name, but {_differs(evidence)}"
            return Decision(Verdict.ASK, SAME_NAME_CONFLICT, 0.0, reason, docs)
        reason = f"same name, {shared} shared neighbour(s)"
        return Decision(Verdict.MERGE, relation.value, 1.0, reason, docs)
    if relation is not NameRelation.NONE:
        score = evidence.name_similarity
        what = relation.value.replace("_", " ")
        if relation is NameRelation.PART and evidence.other_person:
            other = evidence.other_person
            reason = f"{what}, but it holds {other!r}: the same last word, another name"
            return Decision(Verdict.NONE, relation.value, score, reason, docs)
        if _confirmed(evidence, settings):
            reason = f"{what} and {shared} shared neighbour(s)"
            return Decision(Verdict.MERGE, f"{relation.value}+neighbours", score, reason, docs)
        if conflict and not evidence.contradiction_variant:
            return Decision(
                Verdict.NONE, relation.value, score, f"{what}, but {_differs(evidence)}", docs
            )
        which = "neighbourhoods written differently" if conflict else "no neighbour"
        reason = f"{what}, {which} to confirm it"
        return Decision(Verdict.ASK, relation.value, score, reason, docs)
    if evidence.vector_score >= settings.vector_min_score and confirmed:
        reason = f"near names ({evidence.vector_score:.2f}) and {shared} shared neighbour(s)"
        return Decision(Verdict.ASK, NEAR_NAME, evidence.vector_score, reason, docs)
    return Decision(Verdict.NONE, NameRelation.NONE.value, 0.0, "no link", docs)
