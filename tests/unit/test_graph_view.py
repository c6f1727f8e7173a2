"""The graph view's merge of graph-search's per-document nodes into one node per entity."""

from __future__ import annotations

import pytest

from graphrag.graph.names import name_key
from graphrag.graph.search_models import (
    EntityPublic,
    GraphSearchResponse,
    RelationPublic,
    TruncationPublic,
)
from graphrag.search.graph_view import merge_instances

pytestmark = pytest.mark.unit

DOC_A = "11111111-1111-4111-8111-111111111111"
DOC_B = "22222222-2222-4222-8222-222222222222"
FILES = {DOC_A: "plant.md", DOC_B: "people.txt"}
NO_CUT = TruncationPublic(
    results=False, candidates=False, relations=False, sources=False, fields=False
)


def _entity(
    id_: str,
    name: str,
    doc: str,
    chunks: list[str],
    *,
    matched: bool = True,
    attributes: list[str] | None = None,
) -> EntityPublic:
    return EntityPublic(
        id=id_,
        name=name,
        knowledge_id=doc,
        attributes=attributes or [],
        chunks=chunks,
        matched=matched,
    )


def _relation(id_: str, source: str, type_: str, target: str, chunks: list[str]) -> RelationPublic:
    return RelationPublic(id=id_, source=source, target=target, type=type_, chunks=chunks)


def _answer(entities: list[EntityPublic], relations: list[RelationPublic]) -> GraphSearchResponse:
    return GraphSearchResponse(entities=entities, relations=relations, sources=[], truncated=NO_CUT)


def _keys(answer: GraphSearchResponse) -> dict[str, str]:
    return {e.id: name_key(e.name) for e in answer.entities}


def test_one_node_per_entity_listing_its_documents_and_one_edge_per_type() -> None:
    answer = _answer(
        [
            _entity("a-elin", "Elin Brask", DOC_A, ["ca1"], attributes=["director"]),
            _entity(
                "b-elin", "Elin Brask", DOC_B, ["cb1", "cb2"], attributes=["beekeeper", "director"]
            ),
            _entity("a-zorv", "Zorvath Industries", DOC_A, ["ca1"], matched=False),
            _entity("b-zorv", "Zorvath Industries", DOC_B, ["cb1"], matched=False),
            _entity("b-school", "Bergen School", DOC_B, ["cb2"], matched=False),
        ],
        [
            _relation("r1", "a-elin", "runs", "a-zorv", ["ca1"]),
            _relation("r2", "b-elin", "runs", "b-zorv", ["cb1"]),
            _relation("r3", "b-elin", "studied", "b-school", ["cb2"]),
            _relation("r4", "b-elin", "owns", "b-zorv", ["cb1"]),
        ],
    )

    view = merge_instances(answer, _keys(answer), FILES)

    assert [(n.id, n.name, n.matched) for n in view.nodes] == [
        ("a-elin", "Elin Brask", True),
        ("a-zorv", "Zorvath Industries", False),
        ("b-school", "Bergen School", False),
    ]
    elin = view.nodes[0]
    assert elin.key == "elin brask"
    assert elin.attributes == ["director", "beekeeper"]
    assert [(d.knowledge_id, d.file_name, d.entity_ids, d.chunks) for d in elin.documents] == [
        (DOC_A, "plant.md", ["a-elin"], ["ca1"]),
        (DOC_B, "people.txt", ["b-elin"], ["cb1", "cb2"]),
    ]
    assert [
        (e.source, e.type, e.target, e.count, e.relation_ids, e.chunks) for e in view.edges
    ] == [
        ("a-elin", "runs", "a-zorv", 2, ["r1", "r2"], ["ca1", "cb1"]),
        ("a-elin", "studied", "b-school", 1, ["r3"], ["cb2"]),
        ("a-elin", "owns", "a-zorv", 1, ["r4"], ["cb1"]),
    ]
    assert view.truncated == NO_CUT


def test_spellings_of_one_key_merge_and_one_document_is_listed_once() -> None:
    answer = _answer(
        [
            _entity("a-1", "Marie Curie", DOC_A, ["c1"]),
            _entity("a-2", "MARIE CURIE'S", DOC_A, ["c2"]),
            _entity("b-1", "Marie  Curie", DOC_B, ["c3"], matched=False),
        ],
        [],
    )

    [node] = merge_instances(answer, _keys(answer), FILES).nodes

    assert node.name == "Marie Curie"  # the best ranked node names it
    assert node.names == ["Marie Curie", "MARIE CURIE'S", "Marie  Curie"]
    assert node.matched is True
    assert [(d.knowledge_id, d.entity_ids, d.chunks) for d in node.documents] == [
        (DOC_A, ["a-1", "a-2"], ["c1", "c2"]),
        (DOC_B, ["b-1"], ["c3"]),
    ]


def test_a_name_without_key_stays_apart_and_a_relation_direction_counts() -> None:
    answer = _answer(
        [
            _entity("a-q", "???", DOC_A, ["c1"]),
            _entity("b-q", "???", DOC_B, ["c2"]),
            _entity("a-x", "X", DOC_A, ["c1"]),
            _entity("b-x", "X", DOC_B, ["c2"]),
            _entity("a-y", "Y", DOC_A, ["c1"]),
            _entity("b-y", "Y", DOC_B, ["c2"]),
        ],
        [
            _relation("r1", "a-x", "knows", "a-y", ["c1"]),
            _relation("r2", "b-y", "knows", "b-x", ["c2"]),
        ],
    )

    view = merge_instances(answer, _keys(answer), {DOC_A: "plant.md"})

    assert [(n.id, n.key) for n in view.nodes] == [
        ("a-q", ""),
        ("b-q", ""),
        ("a-x", "x"),
        ("a-y", "y"),
    ]
    assert [(e.source, e.target, e.count) for e in view.edges] == [
        ("a-x", "a-y", 1),
        ("a-y", "a-x", 1),
    ]
    # A document without a known file name is shown by its id.
    assert [d.file_name for d in view.nodes[1].documents] == [DOC_B]


def test_nothing_found_is_an_empty_view() -> None:
    view = merge_instances(_answer([], []), {}, {})
    assert (view.nodes, view.edges, view.sources) == ([], [], [])
