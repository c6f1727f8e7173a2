"""The extraction request for one chunk: messages from an ExtractConfig, and the reply schema."""

from __future__ import annotations

import json

import pytest

from graphrag.extraction.models import ExtractConfig
from graphrag.extraction.output_parser import OutputKind, ParseOptions, parse_graph_output
from graphrag.extraction.prompt_builder import (
    build_extraction_messages,
    build_extraction_request,
    graph_json_schema,
    graph_response_format,
)
from graphrag.graph.models import GraphNode, GraphRelation
from graphrag.llm.prompts import load_prompt
from graphrag.settings import get_settings

pytestmark = pytest.mark.unit

CHUNK = "Ada Lovelace worked with Charles Babbage in London."
TEMPLATE = load_prompt("extract_graph")
PROTOCOL = (TEMPLATE.render(text="").system or "").strip()
EXAMPLE = ExtractConfig(
    enabled=True,
    text="Marie Curie taught at the Sorbonne.",
    tags=["taught at", "works with"],
    nodes=[
        GraphNode(name="Marie Curie", attributes=["physicist"]),
        GraphNode(name="Sorbonne"),
    ],
    relations=[GraphRelation(node1="Marie Curie", node2="Sorbonne", type="taught at")],
    custom_instructions="Ignore page headers.",
)


def test_plain_config_gives_protocol_and_chunk() -> None:
    messages = build_extraction_messages(ExtractConfig(), CHUNK, TEMPLATE, strict_tags=True)

    assert [m.role for m in messages] == ["system", "user"]
    assert messages[0].content == PROTOCOL
    assert messages[1].content == f"Passage:\n{CHUNK}"


def test_instructions_tags_and_example_are_added() -> None:
    messages = build_extraction_messages(EXAMPLE, CHUNK, TEMPLATE, strict_tags=True)

    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    system = messages[0].content
    assert system.startswith(PROTOCOL)
    assert "Ignore page headers." in system
    assert "use only the ones below" in system
    assert system.endswith("- taught at\n- works with")
    assert messages[1].content == "Passage:\nMarie Curie taught at the Sorbonne."
    assert json.loads(messages[2].content) == {
        "nodes": [
            {"name": "Marie Curie", "attributes": ["physicist"]},
            {"name": "Sorbonne", "attributes": []},
        ],
        "relations": [{"node1": "Marie Curie", "node2": "Sorbonne", "type": "taught at"}],
    }
    assert messages[3].content == f"Passage:\n{CHUNK}"


def test_the_example_is_sent_once_per_request() -> None:
    messages = build_extraction_messages(EXAMPLE, CHUNK, TEMPLATE, strict_tags=True)
    wire = json.dumps([m.model_dump() for m in messages])

    assert wire.count(EXAMPLE.text) == 1
    assert [m.role for m in messages].count("assistant") == 1  # the example's graph, once
    assert sum(CHUNK in m.content for m in messages) == 1


def test_protocol_stays_lean() -> None:
    # A guard on prompt growth: every chunk pays for the protocol (bench/prompt_tokens.py
    # counts it in model tokens, about 240 for the packaged Gemma).
    assert len(PROTOCOL) < 1200


def test_tags_are_only_preferred_when_other_types_are_kept() -> None:
    system = build_extraction_messages(EXAMPLE, CHUNK, TEMPLATE, strict_tags=False)[0].content

    assert "prefer the ones below" in system
    assert "use only the ones below" not in system


@pytest.mark.parametrize(
    "config",
    [
        ExtractConfig(text="Some example text."),  # nothing extracted from it
        ExtractConfig(nodes=[GraphNode(name="Orphan")]),  # nodes without their text
    ],
)
def test_an_incomplete_example_is_not_shown(config: ExtractConfig) -> None:
    messages = build_extraction_messages(config, CHUNK, TEMPLATE, strict_tags=True)

    assert [m.role for m in messages] == ["system", "user"]


def test_the_example_reply_parses_back_to_the_example() -> None:
    reply = build_extraction_messages(EXAMPLE, CHUNK, TEMPLATE, strict_tags=True)[2].content
    options = ParseOptions.from_settings(get_settings().extraction, EXAMPLE.tags)

    outcome = parse_graph_output(reply, options)

    assert outcome.kind is OutputKind.OK
    assert [n.name for n in outcome.data.nodes] == ["Marie Curie", "Sorbonne"]
    assert outcome.data.relations == EXAMPLE.relations


def test_schema_limits_types_to_tags_only_when_strict() -> None:
    strict = graph_json_schema(["taught at"], strict_tags=True)
    loose = graph_json_schema(["taught at"], strict_tags=False)
    untagged = graph_json_schema([], strict_tags=True)

    def relation_type(schema: dict[str, object]) -> object:
        return schema["properties"]["relations"]["items"]["properties"]["type"]  # type: ignore[index]  # nested literal

    assert relation_type(strict) == {"type": "string", "enum": ["taught at"]}
    assert relation_type(loose) == {"type": "string"}
    assert relation_type(untagged) == {"type": "string"}
    assert strict["required"] == ["nodes", "relations"]
    node = strict["properties"]["nodes"]["items"]
    assert node["required"] == ["name", "attributes"]


def test_response_format_has_the_shape_llama_cpp_accepts() -> None:
    response_format = graph_response_format([], strict_tags=False)

    assert set(response_format) == {"type", "schema"}
    assert response_format["type"] == "json_object"
    assert response_format["schema"] == graph_json_schema([], strict_tags=False)
    json.dumps(response_format)  # must be plain JSON


@pytest.mark.parametrize("keep_outside", [True, False])
def test_request_follows_the_tag_policy_of_the_settings(keep_outside: bool) -> None:
    settings = get_settings().extraction.model_copy(
        update={"keep_relations_outside_tags": keep_outside}
    )

    request = build_extraction_request(EXAMPLE, CHUNK, settings)

    relation = request.response_format["schema"]["properties"]["relations"]["items"]
    assert ("enum" in relation["properties"]["type"]) is not keep_outside
    assert ("use only the ones below" in request.messages[0].content) is not keep_outside
    assert request.messages[-1].content.endswith(CHUNK)
