"""Entity resolution's pure parts: name relations, the rules, and one document's plan."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from graphrag.graph.names import name_tokens
from graphrag.graph.resolution.judge import Pair, parse_answers, render_pairs
from graphrag.graph.resolution.made import MadeInDocument, MadeInRun
from graphrag.graph.resolution.models import Candidate, EntityProfile
from graphrag.graph.resolution.name_match import (
    NameRelation,
    compare_names,
    edit_similarity,
    meeting_keys,
    other_given_names,
    written_alike,
)
from graphrag.graph.resolution.planner import NEW_RULE, gather_evidence, plan_resolution
from graphrag.graph.resolution.rules import SAME_NAME_CONFLICT
from graphrag.graph.resolution.store import word_query
from graphrag.settings import ResolutionSettings, get_settings


@pytest.fixture
def rs() -> ResolutionSettings:
    return get_settings().resolution


def _relation(a: str, b: str, rs: ResolutionSettings) -> NameRelation:
    return compare_names(
        name_tokens(a),
        name_tokens(b),
        titles=rs.titles,
        skip_words=rs.acronym_skip_words,
        typo_min_similarity=rs.typo_min_similarity,
        typo_min_chars=rs.typo_min_chars,
        typo_max_chars=rs.typo_max_chars,
    ).relation


NAME_PAIRS = [
    ("Dr Ada Moreau", "Ada Moreau", NameRelation.SAME),
    ("A. Moreau", "Ada Moreau", NameRelation.INITIALS),
    ("WHO", "World Health Organization", NameRelation.ACRONYM),
    ("Ada Moreua", "Ada Moreau", NameRelation.TYPO),
    ("Moreau", "Ada Moreau", NameRelation.PART),
    ("Ada", "Ada Moreau", NameRelation.NONE),
    ("B. Moreau", "Ada Moreau", NameRelation.NONE),
    ("Paris", "Lyon", NameRelation.NONE),
    ("Chiang Rai", "Chiang Mai", NameRelation.NONE),
    ("California", "University of California", NameRelation.NONE),
    ("Dr", "Ada Moreau", NameRelation.NONE),
]


@pytest.mark.parametrize(("a", "b", "relation"), NAME_PAIRS)
def test_name_relations(a: str, b: str, relation: NameRelation, rs: ResolutionSettings) -> None:
    assert _relation(a, b, rs) is relation
    assert _relation(b, a, rs) is relation


def _meeting_keys(name: str, rs: ResolutionSettings) -> set[str]:
    return meeting_keys(
        name_tokens(name),
        titles=rs.titles,
        skip_words=rs.acronym_skip_words,
        typo_min_chars=rs.typo_min_chars,
        typo_max_chars=rs.typo_max_chars,
        ends=rs.typo_lookup_chars,
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [(a, b) for a, b, relation in NAME_PAIRS if relation is not NameRelation.NONE]
    + [("Kowalcyzk", "Kowalczyk"), ("Ada Moreau", "Ada Moreau")],
)
def test_names_that_relate_share_a_meeting_key(a: str, b: str, rs: ResolutionSettings) -> None:
    assert _meeting_keys(a, rs) & _meeting_keys(b, rs)


def test_unrelated_names_need_not_meet(rs: ResolutionSettings) -> None:
    assert not _meeting_keys("Paris", rs) & _meeting_keys("Lyon", rs)


def test_edit_similarity() -> None:
    assert edit_similarity("moreau", "moreau") == 1.0
    assert edit_similarity("moreau", "moreua") == pytest.approx(1 - 1 / 6)
    assert edit_similarity("moreau", "morel") == pytest.approx(1 - 2 / 6)
    assert edit_similarity("", "x") == 0.0


@pytest.mark.parametrize(
    ("a", "b", "alike"),
    [
        ("Orla Labs", "Orla Laboratories", True),
        ("Acme Corp.", "Acme Corporation", True),
        ("P. Duval", "Paul Duval", True),
        ("Orla Labs", "Brant Labs", False),
        ("Boston Symphony", "Boston University", False),
        ("Orla Labs", "Orla Labs", False),
        ("Orla", "Orla Labs", False),
    ],
)
def test_names_written_alike(a: str, b: str, alike: bool) -> None:
    assert written_alike(name_tokens(a), name_tokens(b)) is alike
    assert written_alike(name_tokens(b), name_tokens(a)) is alike


def test_long_names_are_not_compared_letter_by_letter(rs: ResolutionSettings) -> None:
    long_a = "a" * (rs.typo_max_chars + 1)
    assert _relation(long_a, long_a[:-1] + "b", rs) is NameRelation.NONE


def _profile(name: str, neighbours: Sequence[str] = (), **kw: object) -> EntityProfile:
    return EntityProfile(
        name=name,
        key=" ".join(name_tokens(name)),
        attributes=(),
        neighbours=frozenset(neighbours),
        **kw,  # type: ignore[arg-type]
    )


def _candidate(rid: str, name: str, neighbours: Sequence[str] = (), kg: str = "d1") -> Candidate:
    return Candidate(rid, name, ((kg, name),), (), frozenset(neighbours))


def test_alias_with_a_shared_neighbour_merges(rs: ResolutionSettings) -> None:
    plan = plan_resolution(
        "d2",
        [_profile("A. Moreau", ["lumen lab"])],
        {"A. Moreau": [_candidate("r1", "Ada Moreau", ["lumen lab", "paris"])]},
        rs,
        ask=None,
    )
    assert [(link.target, link.rule) for link in plan.links] == [("r1", "initials+neighbours")]
    assert plan.links[0].documents == ("d1",)
    assert plan.merged == 1


def test_a_later_document_of_a_run_joins_what_an_earlier_one_made(
    rs: ResolutionSettings,
) -> None:
    """The earlier document's new entities are not in the base's candidates (not written yet):
    the run keeps them, and a later entity whose key shares a word weighs them."""
    made = MadeInRun(rs)
    first = plan_resolution("d1", [_profile("Ada Moreau", ["lumen lab"])], {}, rs, None, made)
    second = plan_resolution(
        "d2",
        [_profile("A. Moreau", ["lumen lab"]), _profile("Lumen Lab")],
        {},
        rs,
        None,
        made,
    )
    (ada,) = first.links
    assert ada.rule == NEW_RULE
    alias, lab = second.links
    assert (alias.target, alias.rule) == (ada.target, "initials+neighbours")
    assert lab.rule == NEW_RULE  # no word in common with Ada Moreau: not weighed, a new entity
    # The alias joined the earlier document's entity, and the run knows both documents' made.
    assert made.entities[ada.target].members == (("d1", "Ada Moreau"), ("d2", "A. Moreau"))
    assert [c.resolved_id for c in made.found("lumen lab", {})] == [lab.target]
    assert [c.resolved_id for c in made.found("lumen", {})] == [lab.target]  # its longest word
    assert made.found("lab", {}) == []  # not its longest word: as the base's word branch


def test_a_runs_made_entities_are_found_within_the_word_bound(rs: ResolutionSettings) -> None:
    """A word many made entities hold yields the latest `word_candidates` of them, not all:
    a batch of large documents stays linear."""
    made = MadeInRun(rs)
    names = [f"Orvanta Holding {i}" for i in range(rs.word_candidates * 3)]
    plan_resolution("d1", [_profile(name) for name in names], {}, rs, None, made)
    found = made.found("orvanta", {})
    assert len(found) == rs.word_candidates
    assert [c.name for c in found] == names[-rs.word_candidates :]


def test_homonym_with_conflicting_neighbours_is_kept_apart(rs: ResolutionSettings) -> None:
    music = _profile(
        "John Smith", ["boston symphony", "violin"], single=(("works_at>", "boston symphony"),)
    )
    acme = Candidate(
        "r1",
        "John Smith",
        (("d1", "John Smith"),),
        (),
        frozenset({"acme corp", "london"}),
        single=((("works_at>", "acme corp"),),),
    )
    plan = plan_resolution("d2", [music], {"John Smith": [acme]}, rs, ask=None)
    assert plan.links[0].rule == NEW_RULE and plan.links[0].target != "r1"
    assert [(a.target, a.rule) for a in plan.apart] == [("r1", SAME_NAME_CONFLICT)]
    assert "no shared neighbour" in plan.apart[0].reason
    assert "'boston symphony' / 'acme corp'" in plan.apart[0].reason


def test_same_name_with_other_neighbours_but_no_contradiction_merges(
    rs: ResolutionSettings,
) -> None:
    later = _profile("Sorbonne", ["pierre curie"], single=(("employs>", "pierre curie"),))
    known = Candidate(
        "r1",
        "Sorbonne",
        (("d1", "Sorbonne"),),
        (),
        frozenset({"marie curie", "paul appell"}),
        single=((),),
    )
    plan = plan_resolution("d2", [later], {"Sorbonne": [known]}, rs, ask=None)
    assert [(link.target, link.rule) for link in plan.links] == [("r1", "same_name")]
    assert plan.apart == []


def test_the_model_decides_open_pairs_in_one_batch(rs: ResolutionSettings) -> None:
    asked: list[list[Pair]] = []

    def ask(pairs: Sequence[Pair]) -> tuple[dict[int, bool], int]:
        asked.append(list(pairs))
        return {0: True, 1: False}, 1

    plan = plan_resolution(
        "d2",
        [_profile("A. Moreau", ["x"]), _profile("P. Duval", ["y"])],
        {
            "A. Moreau": [_candidate("r1", "Ada Moreau", ["z"])],
            "P. Duval": [_candidate("r2", "Paul Duval", ["w"])],
        },
        rs,
        ask=ask,
    )
    assert len(asked) == 1 and len(asked[0]) == 2
    targets = {link.name: (link.target, link.rule) for link in plan.links}
    assert targets["A. Moreau"] == ("r1", "llm:initials")
    assert targets["P. Duval"][0] != "r2" and targets["P. Duval"][1] == NEW_RULE
    assert plan.asked == 2 and plan.llm_calls == 1


def _works_at(employer: str) -> tuple[tuple[str, str], ...]:
    return (("works_at>", " ".join(name_tokens(employer))),)


def _worker(name: str, employer: str) -> EntityProfile:
    single = _works_at(employer)
    return _profile(name, [single[0][1]], single=single, related=single)


def _known_worker(rid: str, name: str, employer: str) -> Candidate:
    single = _works_at(employer)
    neighbours = frozenset({single[0][1]})
    return Candidate(rid, name, (("d1", name),), (), neighbours, single=(single,), related=single)


def test_an_employer_written_two_ways_is_asked_not_kept_apart(rs: ResolutionSettings) -> None:
    asked: list[Pair] = []

    def ask(pairs: Sequence[Pair]) -> tuple[dict[int, bool], int]:
        asked.extend(pairs)
        return {0: True}, 1

    profile = _worker("Ada Moreau", "Orla Laboratories")
    known = _known_worker("r1", "Ada Moreau", "Orla Labs")
    assert not rs.llm_asks_homonyms
    plan = plan_resolution("d2", [profile], {"Ada Moreau": [known]}, rs, ask=ask)
    assert [(link.target, link.rule) for link in plan.links] == [("r1", "llm:same_name_variant")]
    assert plan.apart == []
    shown = render_pairs(asked, rs)
    assert "works at orla laboratories" in shown and "works at orla labs" in shown
    assert "@" not in shown


def test_a_near_name_with_a_contradiction_is_not_asked(rs: ResolutionSettings) -> None:
    def ask(pairs: Sequence[Pair]) -> tuple[dict[int, bool], int]:
        raise AssertionError(f"asked about {pairs}")

    profile = _worker("A. Moreau", "Orla Labs")
    known = _known_worker("r1", "Ada Moreau", "Brant Labs")
    plan = plan_resolution("d2", [profile], {"A. Moreau": [known]}, rs, ask=ask)
    assert plan.links[0].rule == NEW_RULE and plan.links[0].target != "r1"
    assert plan.asked == 0


def test_the_pair_asked_is_the_one_whose_relations_are_written_alike(
    rs: ResolutionSettings,
) -> None:
    asked: list[Pair] = []

    def ask(pairs: Sequence[Pair]) -> tuple[dict[int, bool], int]:
        asked.extend(pairs)
        return {0: True}, 1

    stranger = Candidate("r0", "Krxge Moreau", (("d0", "Krxge Moreau"),), (), frozenset())
    colleague = _known_worker("r1", "Ada Moreau", "Orla Labs")
    profile = _worker("Moreau", "Orla Laboratories")
    plan = plan_resolution("d2", [profile], {"Moreau": [stranger, colleague]}, rs, ask=ask)
    assert [pair.candidate.resolved_id for pair in asked] == ["r1"]
    assert plan.links[0].target == "r1"


def test_pins_and_kept_apart_decisions_win(rs: ResolutionSettings) -> None:
    plan = plan_resolution(
        "d2",
        [
            _profile("Ada Moreau", pinned_to="r9"),
            _profile("Paul Duval", kept_from=frozenset({"r2"})),
        ],
        {"Paul Duval": [_candidate("r2", "Paul Duval")]},
        rs,
        ask=None,
    )
    targets = {link.name: link for link in plan.links}
    assert targets["Ada Moreau"].target == "r9" and targets["Ada Moreau"].manual
    assert targets["Paul Duval"].target != "r2"


def test_entities_of_one_document_resolve_with_each_other(rs: ResolutionSettings) -> None:
    plan = plan_resolution(
        "d1", [_profile("Ada Moreau", ["lab"]), _profile("A. Moreau", ["lab"])], {}, rs, None
    )
    assert plan.links[0].target == plan.links[1].target


@pytest.mark.parametrize(
    ("alias", "name"),
    [("WHO", "World Health Organization"), ("Kowalcyzk", "Kowalczyk"), ("Moreau", "Ada Moreau")],
)
def test_an_alias_finds_what_its_document_made_by_a_shared_key(
    alias: str, name: str, rs: ResolutionSettings
) -> None:
    neighbours = ["geneva", "lab"]
    plan = plan_resolution(
        "d1", [_profile(name, neighbours), _profile(alias, neighbours)], {}, rs, None
    )
    first, second = plan.links
    assert second.target == first.target, second.reason


def test_a_document_weighs_the_latest_of_each_key_not_all_it_made(
    rs: ResolutionSettings,
) -> None:
    """Each entity meets the latest `document_candidates` entities filed under each of its
    keys, in the order they were made: a document of thousands of entities stays linear."""
    made = MadeInDocument(rs)
    names = [f"Orvanta Holding {i}" for i in range(rs.document_candidates * 3)]
    for i, name in enumerate(names):
        made.add(_candidate(f"r{i}", name))
    found = [c.name for c in made.found("orvanta")]
    assert found == names[-rs.document_candidates :]
    # Joining a member files the entity under the new name's keys as the latest.
    made.join(_candidate("r0", "Orvanta Holding 0"), "Orvanta Group")
    assert made.found("orvanta")[0].resolved_id == "r0"
    assert [c.resolved_id for c in made.found("group")] == ["r0"]


def test_a_resolved_entity_is_compared_by_its_first_members_only(rs: ResolutionSettings) -> None:
    """A resolved entity the run made can gain a member per entity of a document; each later
    entity compares names with the first `max_members`, as with the base's candidates read."""
    others = tuple(("d1", f"Orvanta Unit {i}") for i in range(rs.max_members))
    late = Candidate("r1", "Orvanta Unit 0", (*others, ("d1", "Ada Moreau")), (), frozenset())
    early = Candidate("r2", "Ada Moreau", (("d1", "Ada Moreau"), *others), (), frozenset())
    alias = _profile("A. Moreau")
    assert gather_evidence(alias, late, rs).relation is NameRelation.NONE
    assert gather_evidence(alias, early, rs).relation is NameRelation.INITIALS


def test_a_family_name_does_not_join_two_people(rs: ResolutionSettings) -> None:
    """ "Curie" joins "Marie Curie" (a part, its neighbours shared); "Pierre Curie" is a part of
    nothing but "Curie", and "Marie Curie" in the same entity is another person: kept out. His
    initial still joins him."""
    neighbours = ["sorbonne", "paris", "radium"]
    names = ["Marie Curie", "Curie", "Pierre Curie", "P. Curie"]
    plan = plan_resolution("d1", [_profile(n, neighbours) for n in names], {}, rs, None)
    target = {link.name: link.target for link in plan.links}
    assert target["Curie"] == target["Marie Curie"]
    assert target["Pierre Curie"] != target["Marie Curie"]
    assert target["P. Curie"] == target["Pierre Curie"]
    marie = _candidate("r1", "Marie Curie", neighbours)
    joined = Candidate(
        "r1", "Marie Curie", (("d1", "Marie Curie"), ("d1", "Curie")), (), marie.neighbours
    )
    evidence = gather_evidence(_profile("Pierre Curie", neighbours), joined, rs)
    assert (evidence.relation, evidence.other_person) == (NameRelation.PART, "Marie Curie")


@pytest.mark.parametrize(
    ("a", "b", "other"),
    [
        ("Marie Curie", "Pierre Curie", True),
        ("Dr Marie Curie", "Pierre Curie", True),
        ("M. Curie", "Marie Curie", False),
        ("M. Curie", "Pierre Curie", True),
        ("Marie Curie", "Marie Curie", False),
        ("Curie", "Marie Curie", False),
        ("Marie Curie", "Marie Dupont", False),
        ("Orla Labs", "Nexa Labs", True),
    ],
)
def test_other_given_names(a: str, b: str, other: bool, rs: ResolutionSettings) -> None:
    assert other_given_names(name_tokens(a), name_tokens(b), rs.titles) is other


def test_parse_answers_keeps_valid_entries_only() -> None:
    text = 'noise {"answers": [{"pair": 1, "same": true}, {"pair": 9, "same": true}, {"pair": 2}'
    assert parse_answers(text, 2) == {0: True}
    assert parse_answers("no json", 2) == {}


def test_word_query_requires_the_longest_word_and_ranks_by_the_others(
    rs: ResolutionSettings,
) -> None:
    assert word_query("dr hugo emubcrdl", "s1", rs) == "+scope:s1 +key:emubcrdl key:hugo"
    many = " ".join(f"w{n}" for n in range(rs.word_query_terms + 5)) + " longestword"
    assert word_query(many, "s1", rs).count(" key:") == rs.word_query_terms
    assert word_query("", "s1", rs) == ""
