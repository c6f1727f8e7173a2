"""One document's resolution decided in memory: each entity linked to a resolved entity.

For each entity, in order: an administrator's pin places it; else every candidate (the base's,
and the resolved entities this document's earlier entities made) is weighed by the rules, the
entity's neighbours counted with the resolved entities they went to in this run; the best clear
merge wins; else the best open pair is asked to the LLM (batched after the pass); else the
entity starts a resolved entity of its own. An entity that looks like a homonym (the same name,
no shared neighbour) is decided last, once its neighbours are placed; homonyms that end apart
are recorded with the reason.

The resolved entities the document's earlier entities made are found by keys of their names
(`MadeInDocument`), not all weighed. A run plans several documents read together, one after the
other: the resolved entities the earlier ones made are not in the base yet, so a later
document's entity also weighs those of its key and those holding its key's longest word
(`MadeInRun`), as the base's same-key and word candidates would have found them once written.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from graphrag.graph.names import name_tokens
from graphrag.graph.resolution.judge import Pair
from graphrag.graph.resolution.made import MadeInDocument, MadeInRun
from graphrag.graph.resolution.models import (
    RESOLVED_TOKEN,
    Candidate,
    Decision,
    EntityProfile,
    Evidence,
    Verdict,
)
from graphrag.graph.resolution.name_match import (
    NameLink,
    NameRelation,
    compare_names,
    other_given_names,
    written_alike,
)
from graphrag.graph.resolution.rules import SAME_NAME_CONFLICT, decide, strength
from graphrag.settings import ResolutionSettings

__all__ = [
    "NEW_RULE",
    "PIN_RULE",
    "Ask",
    "Link",
    "PlannedApart",
    "ResolutionPlan",
    "gather_evidence",
    "plan_resolution",
]

NEW_RULE = "new"
PIN_RULE = "manual"
LLM_PREFIX = "llm:"

# Answers for pairs (index -> same) and the calls it took.
Ask = Callable[[Sequence[Pair]], tuple[dict[int, bool], int]]


@dataclass(frozen=True)
class Link:
    """A document node's link to a resolved entity (made with `canonical` as its name if new)."""

    name: str
    target: str
    canonical: str
    rule: str
    score: float
    reason: str
    documents: tuple[str, ...] = ()
    manual: bool = False


@dataclass(frozen=True)
class PlannedApart:
    """A homonym: the document node is not the resolved entity `target`, for `reason`."""

    name: str
    target: str
    rule: str
    reason: str


@dataclass
class ResolutionPlan:
    """What one run writes, and what it cost."""

    links: list[Link] = field(default_factory=list)
    apart: list[PlannedApart] = field(default_factory=list)
    asked: int = 0
    llm_calls: int = 0

    @property
    def merged(self) -> int:
        """Links to a resolved entity that existed before (the base's or this run's)."""
        return sum(1 for link in self.links if link.rule not in (NEW_RULE, PIN_RULE))


_RELATIONS = list(NameRelation)


def _better(a: NameLink, b: NameLink) -> bool:
    ra, rb = _RELATIONS.index(a.relation), _RELATIONS.index(b.relation)
    return ra < rb or (ra == rb and a.similarity > b.similarity)


def gather_evidence(
    profile: EntityProfile, candidate: Candidate, settings: ResolutionSettings
) -> Evidence:
    """The pair's evidence: the best name relation over the candidate's first `max_members`
    members (and the documents of the members whose names relate), the shared neighbour keys,
    the vector score. The base's candidates are read with that many; a resolved entity this run
    made may have gained more, and comparing each later entity with all of them was quadratic."""
    own = profile.key.split()
    titles, skip = frozenset(settings.titles), frozenset(settings.acronym_skip_words)
    best = NameLink(NameRelation.NONE, 0.0)
    documents: dict[str, None] = {}
    other_person = ""
    members = candidate.members[: settings.max_members]
    names = list(members) or [("", candidate.name)]
    for kg, name in names:
        tokens = name_tokens(name)
        link = compare_names(
            own,
            tokens,
            titles=titles,
            skip_words=skip,
            typo_min_similarity=settings.typo_min_similarity,
            typo_min_chars=settings.typo_min_chars,
            typo_max_chars=settings.typo_max_chars,
        )
        if link.relation is NameRelation.NONE:
            if not other_person and other_given_names(own, tokens, titles):
                other_person = name
        elif kg:
            documents.setdefault(kg, None)
        if _better(link, best):
            best = link
    if not documents:
        documents = dict.fromkeys(kg for kg, _ in members)
    contradiction, variant = _contradiction(profile, candidate)
    return Evidence(
        relation=best.relation,
        name_similarity=best.similarity,
        vector_score=candidate.vector_score,
        shared=profile.neighbours & candidate.neighbours,
        own_neighbours=_count(profile.neighbours),
        their_neighbours=_count(candidate.neighbours),
        contradiction=contradiction,
        contradiction_variant=variant,
        alike=_alike(profile, candidate),
        documents=tuple(documents),
        other_person=other_person,
    )


def _alike(profile: EntityProfile, candidate: Candidate) -> int:
    """Relations of the profile whose target is written alike to a target of the same relation
    on the candidate's side ("works at orla labs", "works at orla laboratories")."""
    theirs: dict[str, list[list[str]]] = {}
    for kind, key in candidate.related:
        theirs.setdefault(kind, []).append(key.split())  # keys: words already normalised
    return sum(
        1
        for kind, key in profile.related
        if any(written_alike(key.split(), other) for other in theirs.get(kind, ()))
    )


def _contradiction(profile: EntityProfile, candidate: Candidate) -> tuple[str, bool]:
    """A relation both sides have with one target each, the targets different (a person who
    works at Acme and one who works at the Boston Symphony), "" when there is none; and whether
    every such pair of targets may be one name written two ways."""
    own = dict(profile.single)
    found = ""
    variant = True
    for member in candidate.single:
        for kind, key in member:
            mine = own.get(kind)
            if mine is not None and mine != key:
                found = found or f"{kind} {mine!r} / {key!r}"
                variant = variant and written_alike(mine.split(), key.split())
    return found, bool(found) and variant


def _count(neighbours: frozenset[str]) -> int:
    """Neighbours, counted by their keys (a resolved id is a second token of one of them)."""
    return sum(1 for token in neighbours if not token.startswith(RESOLVED_TOKEN))


def _new_entity(profile: EntityProfile, kg: str, reason: str) -> tuple[Link, Candidate]:
    target = str(uuid.uuid4())
    link = Link(profile.name, target, profile.name, NEW_RULE, 1.0, reason, (kg,))
    seed = Candidate(
        resolved_id=target,
        name=profile.name,
        members=((kg, profile.name),),
        attributes=profile.attributes,
        neighbours=profile.neighbours,
        related=profile.related,
    )
    return link, seed


def _joined(candidate: Candidate, profile: EntityProfile, kg: str) -> Candidate:
    """This run's resolved entity with one more member (what later entities compare with)."""
    return replace(
        candidate,
        members=(*candidate.members, (kg, profile.name)),
        neighbours=candidate.neighbours | profile.neighbours,
        related=tuple(dict.fromkeys((*candidate.related, *profile.related))),
    )


@dataclass(frozen=True)
class _Weighed:
    candidate: Candidate
    decision: Decision
    evidence: Evidence


def _link_to(profile: EntityProfile, weighed: _Weighed, rule: str, reason: str) -> Link:
    c, d = weighed.candidate, weighed.decision
    return Link(profile.name, c.resolved_id, c.name, rule, d.score, reason, d.documents)


class _Pass:
    """One document's decisions being made: its plan, the resolved entities it has made, where
    each of its keys went, and the pairs left for the model."""

    def __init__(
        self,
        kg: str,
        candidates: Mapping[str, Sequence[Candidate]],
        settings: ResolutionSettings,
        ask: Ask | None,
        earlier: MadeInRun,
    ) -> None:
        self.kg, self.candidates, self.settings, self.ask = kg, candidates, settings, ask
        self.earlier = earlier  # what the run's earlier documents made
        self.plan = ResolutionPlan()
        self.made = MadeInDocument(settings)  # this document's resolved entities
        self.placed: dict[str, str] = {}  # key -> the resolved entity its node went to
        self.open_pairs: list[tuple[EntityProfile, _Weighed, list[_Weighed]]] = []

    def _known(self, profile: EntityProfile) -> EntityProfile:
        """The profile with its neighbours' resolved entities decided earlier in this run."""
        extra = {RESOLVED_TOKEN + self.placed[k] for k in profile.neighbours if k in self.placed}
        return replace(profile, neighbours=profile.neighbours | extra)

    def _link(self, profile: EntityProfile, link: Link) -> None:
        self.plan.links.append(link)
        self.placed[profile.key] = link.target

    def place(self, profile: EntityProfile, *, last_round: bool) -> bool:
        """Decide the profile; False: a homonym left for the last round (its neighbours may be
        resolved by then, and turn out to be shared)."""
        if profile.pinned_to:
            reason = "placed by an administrator"
            pin = Link(
                profile.name, profile.pinned_to, profile.name, PIN_RULE, 1.0, reason, (), True
            )
            self._link(profile, pin)
            return True
        profile = self._known(profile)
        options = [
            *self.candidates.get(profile.name, ()),
            *self.made.found(profile.key),
            *self.earlier.found(profile.key, self.made.entities),
        ]
        weighed = [
            _Weighed(c, decide(ev, self.settings), ev)
            for c in options
            if c.resolved_id not in profile.kept_from
            for ev in (gather_evidence(profile, c, self.settings),)
        ]
        weighed.sort(key=lambda w: strength(w.evidence))
        homonyms = [w for w in weighed if w.decision.rule == SAME_NAME_CONFLICT]
        merge = next((w for w in weighed if w.decision.verdict is Verdict.MERGE), None)
        if merge is not None:
            self._link(
                profile, _link_to(profile, merge, merge.decision.rule, merge.decision.reason)
            )
            target = merge.candidate.resolved_id
            if target in self.made.entities:
                self.made.join(_joined(merge.candidate, profile, self.kg), profile.name)
            elif target in self.earlier.entities:
                self.earlier.keep(_joined(merge.candidate, profile, self.kg))
            _record_apart(self.plan, profile, homonyms, merge.candidate.resolved_id, "")
            return True
        if homonyms and not last_round:
            return False
        askable = [w for w in weighed if w.decision.verdict is Verdict.ASK]
        if not self.settings.llm_asks_homonyms:
            askable = [w for w in askable if w.decision.rule != SAME_NAME_CONFLICT]
        if askable and self.ask is not None:
            self.open_pairs.append((profile, askable[0], homonyms))
            return True
        link, seed = _new_entity(profile, self.kg, f"no match among {len(weighed)} candidate(s)")
        self._link(profile, link)
        self.made.add(seed)
        note = "; no model asked" if self.ask is None else "; the model is not asked about homonyms"
        _record_apart(self.plan, profile, homonyms, link.target, note)
        return True


def plan_resolution(
    kg: str,
    profiles: Sequence[EntityProfile],
    candidates: Mapping[str, Sequence[Candidate]],
    settings: ResolutionSettings,
    ask: Ask | None,
    earlier: MadeInRun | None = None,
) -> ResolutionPlan:
    """The links and homonym records of one document's entities (see the module); what it
    makes is added to `earlier`, for the run's next documents."""
    made = MadeInRun(settings) if earlier is None else earlier
    run = _Pass(kg, candidates, settings, ask, made)
    later = [p for p in profiles if not run.place(p, last_round=False)]
    for profile in later:
        run.place(profile, last_round=True)
    if run.open_pairs and ask is not None:
        _settle_open_pairs(run.plan, kg, run.open_pairs, ask)
    for candidate in run.made.entities.values():
        made.keep(candidate)
    return run.plan


def _settle_open_pairs(
    plan: ResolutionPlan,
    kg: str,
    open_pairs: list[tuple[EntityProfile, _Weighed, list[_Weighed]]],
    ask: Ask,
) -> None:
    answers, calls = ask([Pair(p, w.candidate) for p, w, _ in open_pairs])
    plan.asked += len(open_pairs)
    plan.llm_calls += calls
    for index, (profile, weighed, homonyms) in enumerate(open_pairs):
        answer = answers.get(index)
        if answer:
            reason = f"the model said the same entity ({weighed.decision.reason})"
            rule = LLM_PREFIX + weighed.decision.rule
            plan.links.append(_link_to(profile, weighed, rule, reason))
            _record_apart(plan, profile, homonyms, weighed.candidate.resolved_id, "")
            continue
        said = "; the model said different" if answer is False else "; the model did not answer"
        link, _ = _new_entity(profile, kg, f"kept apart{said}")
        plan.links.append(link)
        _record_apart(plan, profile, homonyms, link.target, said)


def _record_apart(
    plan: ResolutionPlan,
    profile: EntityProfile,
    homonyms: list[_Weighed],
    target: str,
    note: str,
) -> None:
    for w in homonyms:
        if w.candidate.resolved_id != target:
            reason = w.decision.reason + note
            plan.apart.append(
                PlannedApart(profile.name, w.candidate.resolved_id, SAME_NAME_CONFLICT, reason)
            )
