"""Graph and extract-config models: names normalised, duplicates dropped, caps enforced."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from graphrag.errors import InvalidInputError
from graphrag.extraction.models import ExtractConfig, check_extract_config
from graphrag.graph.models import GraphNode, GraphRelation
from graphrag.settings import get_settings

pytestmark = pytest.mark.unit

LIMITS = get_settings().extraction.model_copy(
    update={
        "max_tags": 2,
        "max_example_text_chars": 10,
        "max_custom_instructions_chars": 10,
        "max_nodes_per_chunk": 1,
        "max_relations_per_chunk": 1,
        "max_name_chars": 8,
    }
)


def test_names_and_lists_are_normalised() -> None:
    node = GraphNode(name="  Marie \n Curie ", attributes=[" physicist", "physicist", " ", "x"])
    config = ExtractConfig(tags=["works for", " works  for", "", "owns"], text="  t ")

    assert node.name == "Marie Curie"
    assert node.attributes == ["physicist", "x"]
    assert config.tags == ["works for", "owns"]
    assert config.text == "t"


@pytest.mark.parametrize(
    "build",
    [
        lambda: GraphNode(name="  "),
        lambda: GraphRelation(node1="a", node2="", type="t"),
        lambda: GraphRelation(node1="a", node2="b", type="\n"),
        lambda: ExtractConfig.model_validate({"nodes": [{"name": ""}]}),
        lambda: ExtractConfig.model_validate({"unknown": True}),
    ],
)
def test_empty_names_and_unknown_fields_are_refused(build: object) -> None:
    with pytest.raises(ValidationError):
        build()  # type: ignore[operator]  # the table holds callables


def test_a_node_carries_no_chunk_list() -> None:
    """The chunk a graph was read from is the store's argument, not a field nobody reads."""
    with pytest.raises(ValidationError):
        GraphNode.model_validate({"name": "A", "chunks": ["c1"]})


def test_config_within_limits_passes() -> None:
    config = ExtractConfig(
        tags=["a", "b"],
        text="0123456789",
        nodes=[GraphNode(name="12345678")],
        relations=[GraphRelation(node1="a", node2="b", type="t")],
    )

    check_extract_config(config, LIMITS)


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        (ExtractConfig(tags=["a", "b", "c"]), "at most 2 tags"),
        (ExtractConfig(text="x" * 11), "example text"),
        (ExtractConfig(custom_instructions="x" * 11), "custom instructions"),
        (ExtractConfig(nodes=[GraphNode(name="a"), GraphNode(name="b")]), "example nodes"),
        (ExtractConfig(tags=["123456789"]), "names and tags"),
        (ExtractConfig(nodes=[GraphNode(name="123456789")]), "names and tags"),
        (
            ExtractConfig(relations=[GraphRelation(node1="a", node2="123456789", type="t")]),
            "names and tags",
        ),
        (
            ExtractConfig(relations=[GraphRelation(node1="a", node2="b", type="123456789")]),
            "names and tags",
        ),
        (
            ExtractConfig(relations=[GraphRelation(node1="a", node2="b", type="t")] * 2),
            "example relations",
        ),
    ],
)
def test_config_over_a_limit_is_refused(config: ExtractConfig, problem: str) -> None:
    with pytest.raises(InvalidInputError, match=problem):
        check_extract_config(config, LIMITS)
