"""Graph ranking on small hand-made graphs: PageRank orders, evidence, caps, empty graphs."""

from __future__ import annotations

import numpy as np
import pytest

from graphrag.graph.neighbourhood import KeyInstance, KeyMatch, MatchKind, NeighbourLink
from graphrag.search.graph_rank import (
    GraphRanker,
    PprParams,
    build_graph,
    personalized_pagerank,
    rank_chunks,
    seed_weights,
)

pytestmark = pytest.mark.unit

PARAMS = PprParams(damping=0.5, max_iterations=100, tolerance=1e-12, neighbour_decay=0.5)


def row(
    key: str,
    chunks: list[str],
    neighbours: list[tuple[str, str, list[str]]] = (),  # type: ignore[assignment]
    instances: int = 1,
    matches: tuple[KeyMatch, ...] = (),
) -> KeyInstance:
    return KeyInstance(
        key=key,
        instances=instances,
        name=key.title(),
        kg="doc",
        chunks=tuple(chunks),
        neighbours=tuple(NeighbourLink(k, k.title(), t, tuple(c)) for k, t, c in neighbours),
        matches=matches,
    )


def test_pagerank_of_a_path_decreases_with_distance_from_the_seed() -> None:
    # 0 - 1 - 2 - 3, restart at 0.
    sources = np.array([0, 1, 1, 2, 2, 3])
    targets = np.array([1, 0, 2, 1, 3, 2])
    reset = np.array([1.0, 0.0, 0.0, 0.0])
    scores = personalized_pagerank(4, sources, targets, reset, PARAMS)
    assert list(np.argsort(-scores)) == [0, 1, 2, 3]
    assert scores.sum() == pytest.approx(1.0)


def test_pagerank_matches_the_closed_form_of_two_nodes() -> None:
    # Two linked nodes, restart at 0: x0 = (1-d) + d*x1, x1 = d*x0 -> x0 = 1/(1+d).
    scores = personalized_pagerank(
        2, np.array([0, 1]), np.array([1, 0]), np.array([1.0, 0.0]), PARAMS
    )
    assert scores[0] == pytest.approx(1 / 1.5)
    assert scores[1] == pytest.approx(0.5 / 1.5)


def test_dangling_mass_returns_to_the_seeds() -> None:
    scores = personalized_pagerank(
        3, np.array([0, 1]), np.array([1, 0]), np.array([0.0, 0.0, 1.0]), PARAMS
    )
    assert scores[2] == pytest.approx(1.0) and scores.sum() == pytest.approx(1.0)


def test_chunk_reached_through_a_relation_ranks_after_the_seed_chunk_with_its_path() -> None:
    rows = [row("alpha", ["c1"], [("beta", "works_for", ["c2"])]), row("beta", ["c2", "c3"])]
    graph = build_graph(rows, max_nodes=100)
    ranked = rank_chunks(graph, {"alpha": 1.0}, {}, GraphRanker.PPR, PARAMS)
    assert [e.chunk_id for e in ranked] == ["c1", "c2", "c3"]
    assert ranked[0].path == ("Alpha",) and ranked[0].seeds == ("Alpha",)
    assert ranked[1].path == ("Alpha", "works_for", "Beta") and ranked[1].seeds == ("Alpha",)
    assert ranked[0].score > ranked[1].score > 0
    assert ranked[1].score == pytest.approx(ranked[2].score)  # both only through Beta


def test_specific_seeds_weigh_more_than_common_ones() -> None:
    rows = [row("rare", ["c1"], instances=1), row("common", ["c2"], instances=50)]
    weights = seed_weights(rows, ["rare", "common"])
    assert weights == {"rare": 1.0, "common": 1 / 50}
    ranked = rank_chunks(build_graph(rows, 100), weights, {}, GraphRanker.PPR, PARAMS)
    assert [e.chunk_id for e in ranked] == ["c1", "c2"]


def test_a_chunk_named_by_two_seeds_beats_one_named_by_one() -> None:
    rows = [row("a", ["both", "only_a"]), row("b", ["both"])]
    for ranker in GraphRanker:
        ranked = rank_chunks(build_graph(rows, 100), {"a": 1, "b": 1}, {}, ranker, PARAMS)
        assert ranked[0].chunk_id == "both", ranker


def test_entity_overlap_scores_are_seed_weights_and_their_decayed_share() -> None:
    rows = [row("a", ["c1"], [("b", "rel", ["c2"])])]
    ranked = rank_chunks(build_graph(rows, 100), {"a": 2.0}, {}, GraphRanker.ENTITY_OVERLAP, PARAMS)
    assert [(e.chunk_id, e.score) for e in ranked] == [("c1", 2.0), ("c2", 1.0)]


def test_passage_seeds_lift_their_chunk() -> None:
    rows = [row("a", ["c1", "c2"])]
    graph = build_graph(rows, 100)
    plain = rank_chunks(graph, {"a": 1.0}, {}, GraphRanker.PPR, PARAMS)
    seeded = rank_chunks(graph, {"a": 1.0}, {"c2": 1.0, "absent": 5.0}, GraphRanker.PPR, PARAMS)
    assert plain[0].score == pytest.approx(plain[1].score)
    assert seeded[0].chunk_id == "c2"


def test_empty_graph_and_unknown_seeds_rank_nothing() -> None:
    assert rank_chunks(build_graph([], 100), {"a": 1.0}, {}, GraphRanker.PPR, PARAMS) == []
    graph = build_graph([row("a", ["c1"])], 100)
    assert rank_chunks(graph, {"zzz": 1.0}, {}, GraphRanker.PPR, PARAMS) == []
    assert rank_chunks(graph, {}, {}, GraphRanker.ENTITY_OVERLAP, PARAMS) == []


def test_a_seed_without_chunks_still_leads_to_its_neighbours_chunks() -> None:
    rows = [row("a", [], [("b", "rel", ["c9"])])]
    ranked = rank_chunks(build_graph(rows, 100), {"a": 1.0}, {}, GraphRanker.PPR, PARAMS)
    assert [e.chunk_id for e in ranked] == ["c9"]
    assert ranked[0].path == ("A", "rel", "B")


def test_node_cap_bounds_a_hub() -> None:
    hub = row("hub", [f"c{i}" for i in range(5000)])
    graph = build_graph([hub], max_nodes=101)
    assert len(graph.index) == 101 and graph.truncated
    ranked = rank_chunks(graph, {"hub": 1.0}, {}, GraphRanker.PPR, PARAMS)
    assert len(ranked) == 100


def test_iteration_cap_stops_the_walk_early() -> None:
    rows = [row("a", ["c1"], [("b", "rel", ["c2"])])]
    graph = build_graph(rows, 100)
    one = PprParams(damping=0.5, max_iterations=1, tolerance=1e-12, neighbour_decay=0.5)
    ranked = rank_chunks(graph, {"a": 1.0}, {}, GraphRanker.PPR, one)
    # One step from the seed reaches its direct chunk and neighbour, not the neighbour's chunk.
    assert [e.chunk_id for e in ranked] == ["c1"]


def test_a_path_keeps_the_stored_direction_of_its_relation() -> None:
    incoming = KeyInstance(
        key="firm",
        instances=1,
        name="Firm",
        kg="doc",
        chunks=("c1",),
        neighbours=(NeighbourLink("boss", "Boss", "runs", ("c2",), outgoing=False),),
    )
    ranked = rank_chunks(build_graph([incoming], 100), {"firm": 1.0}, {}, GraphRanker.PPR, PARAMS)
    assert ranked[1].path == ("Boss", "runs", "Firm") and ranked[1].seeds == ("Firm",)


def passage_row(key: str, chunks: list[str], passage: str, instances: int = 1) -> KeyInstance:
    """A key found only through a passage seed (no relations read for it)."""
    return row(
        key, chunks, instances=instances, matches=(KeyMatch(MatchKind.PASSAGE, passage, 1.0),)
    )


def test_weighted_walk_follows_edges_in_proportion_to_their_weights() -> None:
    # A star: node 0 linked to 1 and 2; the edge to 2 weighs three times the edge to 1.
    sources = np.array([0, 1, 0, 2])
    targets = np.array([1, 0, 2, 0])
    weights = np.array([1.0, 1.0, 3.0, 1.0])
    reset = np.array([1.0, 0.0, 0.0])
    scores = personalized_pagerank(3, sources, targets, reset, PARAMS, weights)
    assert scores[2] == pytest.approx(3 * scores[1])
    assert scores.sum() == pytest.approx(1.0)


def test_a_passage_leads_to_the_documents_of_its_rare_entity_not_its_common_one() -> None:
    # The seed passage p names a rare entity (2 documents) and a common one (40 documents);
    # each is also named in one other chunk. The walk leaves p mostly through the rare one.
    rows = [
        passage_row("rare", ["p", "rare_doc"], "p", instances=2),
        passage_row("common", ["p", "common_doc"], "p", instances=40),
    ]
    ranked = rank_chunks(build_graph(rows, 100), {}, {"p": 1.0}, GraphRanker.PPR, PARAMS)
    order = [e.chunk_id for e in ranked]
    assert order[:2] == ["p", "rare_doc"] and order.index("rare_doc") < order.index("common_doc")
    bridged = ranked[1]
    assert bridged.seeds == ("Rare",) and bridged.via_chunk == "p"
    assert ranked[0].via_chunk is None  # the passage itself was not reached from another one


def test_question_entities_and_passages_seed_the_walk_together() -> None:
    # The question names "alpha" (chunk a1); the best passage p names "beta", whose own
    # document holds b1. Without the passage the walk never reaches b1.
    rows = [row("alpha", ["a1", "p"]), passage_row("beta", ["p", "b1"], "p")]
    graph = build_graph(rows, 100)
    alone = rank_chunks(graph, {"alpha": 1.0}, {}, GraphRanker.PPR, PARAMS)
    seeded = rank_chunks(graph, {"alpha": 1.0}, {"p": 0.5}, GraphRanker.PPR, PARAMS)
    assert {e.chunk_id for e in alone} == {"a1", "p", "b1"}  # b1 through p, reached from alpha
    b1_alone = next(e.score for e in alone if e.chunk_id == "b1")
    b1_seeded = next(e.score for e in seeded if e.chunk_id == "b1")
    assert b1_seeded > b1_alone


def test_entity_overlap_credits_a_passages_entities_by_their_specificity() -> None:
    rows = [
        passage_row("rare", ["p", "r1"], "p", instances=2),
        passage_row("common", ["p", "c1"], "p", instances=10),
    ]
    ranked = rank_chunks(build_graph(rows, 100), {}, {"p": 1.0}, GraphRanker.ENTITY_OVERLAP, PARAMS)
    scores = {e.chunk_id: e.score for e in ranked}
    assert scores["r1"] == pytest.approx(0.5) and scores["c1"] == pytest.approx(0.1)
    assert scores["p"] == pytest.approx(0.6)  # it names both


def test_passage_seeds_alone_rank_without_question_entities() -> None:
    rows = [passage_row("beta", ["p", "b1"], "p")]
    ranked = rank_chunks(
        build_graph(rows, 100), {}, {"p": 1.0, "absent": 1.0}, GraphRanker.PPR, PARAMS
    )
    assert [e.chunk_id for e in ranked] == ["p", "b1"]
