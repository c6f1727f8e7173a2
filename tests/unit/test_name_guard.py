"""Extraction guards: placeholder and punctuation names, relations to entities not extracted."""

from __future__ import annotations

import json

import pytest

from graphrag.extraction.drops import DropCounts, EntityDrop, RelationDrop
from graphrag.extraction.models import ExtractConfig
from graphrag.extraction.name_guard import NameGuard, name_key, prompt_example_names
from graphrag.extraction.output_parser import ParseOptions, parse_graph_output
from graphrag.extraction.prompt_builder import build_extraction_request
from graphrag.graph.models import GraphNode, GraphRelation
from graphrag.ingest.schemas import GraphDrops
from graphrag.settings import get_settings

pytestmark = pytest.mark.unit

CHUNK = "Ada Moreau founded Northwind Robotics, which makes the Sorter X2."


def _answer(nodes: list[str], relations: list[tuple[str, str, str]]) -> str:
    return json.dumps(
        {
            "nodes": [{"name": name, "attributes": []} for name in nodes],
            "relations": [{"node1": a, "node2": b, "type": t} for a, b, t in relations],
        }
    )


def _options(chunk_text: str = CHUNK, config: ExtractConfig | None = None) -> ParseOptions:
    settings = get_settings().extraction
    config = config or ExtractConfig(enabled=True)
    request = build_extraction_request(config, chunk_text, settings)
    return ParseOptions.from_settings(
        settings, config.tags, example_names=request.example_names, chunk_text=chunk_text
    )


@pytest.mark.parametrize(
    "name",
    ["<entity>", "entity", "Entity", "  NAME ", '"name"', "[node]", "entity_name", "<Entity-1>"],
)
def test_schema_words_are_placeholders_whatever_the_chunk(name: str) -> None:
    outcome = parse_graph_output(_answer([name, "Ada Moreau"], []), _options())
    assert [node.name for node in outcome.data.nodes] == ["Ada Moreau"]
    assert outcome.drops.entities == {EntityDrop.PLACEHOLDER: 1}


@pytest.mark.parametrize("name", ["", "   ", "...", "-", "—", "()", "?!", "\u00a0*\u00a0"])
def test_empty_or_punctuation_names_are_no_names(name: str) -> None:
    outcome = parse_graph_output(_answer([name, "Ada Moreau"], []), _options())
    assert [node.name for node in outcome.data.nodes] == ["Ada Moreau"]
    assert outcome.drops.entities == {EntityDrop.NO_NAME: 1}


def test_names_of_letters_or_digits_in_any_script_stay() -> None:
    names = ["X2", "7", "東京", "Ωmega", "R&D"]
    outcome = parse_graph_output(_answer(names, []), _options(" ".join(names)))
    assert [node.name for node in outcome.data.nodes] == names
    assert outcome.drops == DropCounts()


def test_the_prompts_example_names_are_dropped_unless_the_chunk_names_them() -> None:
    # The extraction template shows "Marie Curie" as an example of a full name.
    assert "Marie Curie" in _options().guard.placeholders or "marie curie" in (
        _options().guard.placeholders
    )
    copied = parse_graph_output(_answer(["Marie Curie", "Ada Moreau"], []), _options())
    assert [node.name for node in copied.data.nodes] == ["Ada Moreau"]
    assert copied.drops.entities == {EntityDrop.PLACEHOLDER: 1}
    named = parse_graph_output(
        _answer(["Marie Curie"], []), _options("A biography of MARIE  CURIE, the physicist.")
    )
    assert [node.name for node in named.data.nodes] == ["Marie Curie"]


def test_the_kb_few_shot_example_names_are_dropped_unless_the_chunk_names_them() -> None:
    config = ExtractConfig(
        enabled=True,
        text="Jonas Verbeek runs Harbor Logistics.",
        nodes=[GraphNode(name="Jonas Verbeek"), GraphNode(name="Harbor Logistics")],
        relations=[GraphRelation(node1="Jonas Verbeek", node2="Harbor Logistics", type="runs")],
    )
    answer = _answer(
        ["Jonas Verbeek", "Harbor Logistics", "Ada Moreau", "Northwind Robotics"],
        [
            ("Jonas Verbeek", "Harbor Logistics", "runs"),
            ("Ada Moreau", "Northwind Robotics", "founded"),
        ],
    )
    outcome = parse_graph_output(answer, _options(CHUNK, config))
    assert [node.name for node in outcome.data.nodes] == ["Ada Moreau", "Northwind Robotics"]
    assert [(r.node1, r.node2) for r in outcome.data.relations] == [
        ("Ada Moreau", "Northwind Robotics")
    ]
    assert outcome.drops.entities == {EntityDrop.PLACEHOLDER: 2}
    assert outcome.drops.relations == {RelationDrop.UNKNOWN_END: 1}
    # The same names in a chunk that does hold them are real entities.
    own = parse_graph_output(answer, _options("Jonas Verbeek runs Harbor Logistics. " + CHUNK))
    assert len(own.data.nodes) == 4 and len(own.data.relations) == 2


def test_relations_need_both_ends_among_the_entities_kept() -> None:
    answer = _answer(
        ["Ada Moreau", "Northwind Robotics", "<entity>", "..."],
        [
            ("Ada Moreau", "Northwind Robotics", "founded"),
            ("<entity>", "Ada Moreau", "<relation>"),
            ("Ada Moreau", "...", "knows"),
            ("Northwind Robotics", "Sorter X2", "makes"),  # Sorter X2 is not listed
            ("Ada Moreau", "", "knows"),
        ],
    )
    outcome = parse_graph_output(answer, _options())
    assert [node.name for node in outcome.data.nodes] == ["Ada Moreau", "Northwind Robotics"]
    assert [r.type for r in outcome.data.relations] == ["founded"]
    assert outcome.drops.entities == {EntityDrop.PLACEHOLDER: 1, EntityDrop.NO_NAME: 1}
    assert outcome.drops.relations == {RelationDrop.UNKNOWN_END: 4}
    assert (outcome.dropped_nodes, outcome.dropped_relations) == (2, 4)


def test_an_answer_of_triples_only_still_guards_its_ends() -> None:
    answer = json.dumps(
        [
            {"subject": "Ada Moreau", "predicate": "founded", "object": "Northwind Robotics"},
            {"subject": "entity", "predicate": "relation", "object": "Ada Moreau"},
            {"subject": "Northwind Robotics", "predicate": "makes", "object": "!!"},
        ]
    )
    outcome = parse_graph_output(answer, _options())
    assert [node.name for node in outcome.data.nodes] == ["Ada Moreau", "Northwind Robotics"]
    assert len(outcome.data.relations) == 1
    assert outcome.drops.relations == {RelationDrop.UNKNOWN_END: 2}


def test_prompt_example_names_come_from_quotes_and_slots() -> None:
    text = 'Write "Marie Curie", not "she".\n{"name": "<entity>", "x": "<fact>"} "..." <\nnot>'
    names = prompt_example_names(text, max_chars=50)
    assert names == ["Marie Curie", "she", "name", "<entity>", "x", "<fact>"]


def test_name_key_ignores_case_spacing_separators_and_wrappers() -> None:
    assert name_key("  <Entity_Name> ") == name_key('"entity-name"') == "entity name"
    guard = NameGuard.for_chunk(["entity"], ["Marie Curie"], "nothing here")
    assert guard.is_placeholder("[ENTITY]") and guard.is_placeholder("marie  curie")
    assert not guard.is_placeholder("Entity Framework")


def test_drop_counts_survive_their_stored_form() -> None:
    counts = DropCounts(
        entities={EntityDrop.PLACEHOLDER: 3, EntityDrop.NO_NAME: 1},
        relations={RelationDrop.UNKNOWN_END: 2},
    )
    flat = counts.flat()
    assert flat == {"entities.placeholder": 3, "entities.no_name": 1, "relations.unknown_end": 2}
    assert DropCounts.from_flat({**flat, "entities.gone": 5, "other": "x"}) == counts
    public = GraphDrops.of(counts).model_dump(mode="json")
    assert public == {
        "dropped_entities": 4,
        "dropped_relations": 2,
        "entities": {"placeholder": 3, "no_name": 1},
        "relations": {"unknown_end": 2},
    }


def test_the_placeholder_list_lives_in_the_settings() -> None:
    names = get_settings().extraction.placeholder_names
    assert {"entity", "name", "node"} <= set(names)
