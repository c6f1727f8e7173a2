"""How a question and the best passages seed the graph ranking (the store is a fake port)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import pytest

from graphrag.graph.neighbourhood import (
    KeyInstance,
    KeyMatch,
    MatchKind,
    NameMatching,
    NeighbourhoodLimits,
)
from graphrag.graph.store import GraphStore
from graphrag.search.graph_retrieval import GraphQuery, SeedPassage, rank_in_graph
from graphrag.settings import SearchSettings, Settings

pytestmark = pytest.mark.unit

KB, OTHER_KB = uuid.uuid4(), uuid.uuid4()
DOC = uuid.uuid4()


@dataclass
class FakeNeighbourhood:
    """Answers the neighbourhood read with fixed rows and records what it was asked."""

    rows: list[KeyInstance]
    near_rows: list[KeyInstance] = field(default_factory=list)  # answers a near-vector read
    calls: list[tuple[list[str], NameMatching]] = field(default_factory=list)

    def entity_neighbourhood(
        self,
        kb_id: uuid.UUID,
        keys: Sequence[str],
        knowledge_ids: Sequence[uuid.UUID] | None,
        limits: NeighbourhoodLimits,
        matching: NameMatching | None = None,
    ) -> list[KeyInstance]:
        self.calls.append((list(keys), matching or NameMatching()))
        return self.near_rows if matching is not None and matching.vectors else self.rows


def instance(key: str, chunks: list[str], *matches: KeyMatch, docs: int = 1) -> KeyInstance:
    return KeyInstance(key, docs, key.title(), str(DOC), tuple(chunks), (), tuple(matches))


def search_settings(**graph_changes: object) -> SearchSettings:
    """The shipped search settings at one hop, `graph_changes` made to their graph branch."""
    search = Settings().search
    graph = search.graph.model_copy(update={"hops": 1, **graph_changes})
    return search.model_copy(update={"graph": graph})


def ranked(store: FakeNeighbourhood, query: GraphQuery, **changes: object) -> dict[str, float]:
    ranking = rank_in_graph(cast(GraphStore, store), search_settings(**changes), query)
    return {e.chunk_id: e.score for e in ranking.evidence}


def test_the_best_passages_of_the_base_are_sent_with_their_entity_keys() -> None:
    store = FakeNeighbourhood([])
    mine = [SeedPassage(KB, uuid.uuid4(), (f"key {i}",)) for i in range(2)]
    elsewhere = SeedPassage(OTHER_KB, uuid.uuid4(), ("other",))
    query = GraphQuery("Where is Orvex Arms?", [KB], passages=[mine[0], elsewhere, mine[1]])
    rank_in_graph(cast(GraphStore, store), search_settings(), query)
    ((_, matching),) = store.calls
    assert [(p.chunk_id, p.keys) for p in matching.passages] == [
        (str(p.chunk_id), p.keys) for p in mine
    ]
    assert matching.passage_max_documents == search_settings().graph.passage_max_documents


def test_runs_of_words_outside_the_names_do_not_seed_when_a_name_matched() -> None:
    # "Orvex Arms" is a name of the question; "which" is only a run of its words.
    store = FakeNeighbourhood([instance("orvex arms", ["name"]), instance("which", ["word"])])
    query = GraphQuery("Which rifle did Orvex Arms make?", [KB])
    assert set(ranked(store, query, outside_name_weight=0.0)) == {"name"}
    assert set(ranked(store, query, outside_name_weight=0.5)) == {"name", "word"}


def test_every_run_seeds_when_no_name_matched() -> None:
    store = FakeNeighbourhood([instance("rifle", ["c1"])])
    query = GraphQuery("which rifle was made in montana?", [KB])
    assert set(ranked(store, query, outside_name_weight=0.0)) == {"c1"}


def test_a_name_found_exactly_takes_no_loose_matches() -> None:
    loose = KeyMatch(MatchKind.WORDS, "Orvex Arms", 1.0)
    near = KeyMatch(MatchKind.VECTOR, "Kimber Mfg", 0.9)
    store = FakeNeighbourhood(
        [
            instance("orvex arms", ["exact"]),
            instance("orvex arms company", ["loose"], loose),
            instance("kimber manufacturing", ["near"], near),
        ]
    )
    query = GraphQuery("Did Orvex Arms buy Kimber Mfg?", [KB])
    scores = ranked(store, query, loose_match_weight=0.25)
    assert "loose" not in scores  # "Orvex Arms" itself was found
    assert 0 < scores["near"] < scores["exact"]  # "Kimber Mfg" was not, its near match counts less


def test_keys_found_only_through_a_passage_are_not_question_seeds() -> None:
    passage = uuid.uuid4()
    via = KeyMatch(MatchKind.PASSAGE, str(passage), 1.0)
    store = FakeNeighbourhood([instance("beta", [str(passage), "b1"], via)])
    query = GraphQuery("What about it?", [KB], passages=[SeedPassage(KB, passage, ("beta",))])
    ranking = rank_in_graph(cast(GraphStore, store), search_settings(), query)
    assert ranking.seeds == []
    by_chunk = {e.chunk_id: e for e in ranking.evidence}
    assert by_chunk["b1"].via_chunk == str(passage) and by_chunk["b1"].seeds == ("Beta",)


def test_a_run_sharing_a_word_with_a_name_counts_as_the_name() -> None:
    # "Kingston" and "Jamaica" are names; the matched run "kingston jamaica" spans both, and
    # "born" meets no name.
    store = FakeNeighbourhood([instance("kingston jamaica", ["place"]), instance("born", ["word"])])
    query = GraphQuery("Which singer born in Kingston, Jamaica sang it?", [KB])
    assert set(ranked(store, query, outside_name_weight=0.0)) == {"place"}


def test_a_name_inside_a_longer_matched_run_takes_no_loose_matches() -> None:
    # The question's name "Heinkel HD" (its capitalised span stops before "23") was found as
    # part of the run "heinkel hd 23": keys merely holding its words are not wanted.
    loose = KeyMatch(MatchKind.WORDS, "Heinkel HD", 1.0)
    store = FakeNeighbourhood(
        [instance("heinkel hd 23", ["plane"]), instance("heinkel hd 15", ["other"], loose)]
    )
    query = GraphQuery("Where was the Heinkel HD 23 carried?", [KB])
    assert set(ranked(store, query)) == {"plane"}


@dataclass
class CountingEmbedder:
    asked: list[list[str]] = field(default_factory=list)

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        self.asked.append(list(texts))
        return [[1.0, 0.0] for _ in texts]


def test_names_found_exactly_are_neither_embedded_nor_looked_up_by_vector() -> None:
    embed = CountingEmbedder()
    store = FakeNeighbourhood([instance("orvex arms", ["exact"])])
    query = GraphQuery("Where is Orvex Arms?", [KB], embed_names=embed)
    rank_in_graph(cast(GraphStore, store), search_settings(), query)
    assert embed.asked == [] and len(store.calls) == 1


def test_only_the_names_not_found_are_embedded_for_a_second_near_read() -> None:
    embed = CountingEmbedder()
    near = KeyMatch(MatchKind.VECTOR, "Kimber Mfg", 0.9)
    store = FakeNeighbourhood(
        [instance("orvex arms", ["exact"])],
        near_rows=[instance("kimber manufacturing", ["near"], near)],
    )
    query = GraphQuery("Did Orvex Arms buy Kimber Mfg?", [KB], embed_names=embed)
    scores = ranked(store, query)
    assert embed.asked == [["Kimber Mfg"]]
    (_, first), (keys, second) = store.calls
    assert not first.vectors and keys == [] and list(second.vectors) == ["Kimber Mfg"]
    assert 0 < scores["near"] < scores["exact"]


def test_several_bases_embed_a_missing_name_once() -> None:
    embed = CountingEmbedder()
    store = FakeNeighbourhood([instance("orvex arms", ["exact"])])
    query = GraphQuery("Did Orvex Arms buy Kimber Mfg?", [KB, OTHER_KB], embed_names=embed)
    rank_in_graph(cast(GraphStore, store), search_settings(), query)
    assert embed.asked == [["Kimber Mfg"]]
