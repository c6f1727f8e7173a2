"""A real llama.cpp server (llama-cpp-python + Gemma 3 270M) answers graph extraction as JSON.

The server comes from the session fixture `llama_base_url` (tests/support/llama.py).
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.llama]

REQUEST_TIMEOUT_S = 120.0
TEMPERATURE = 0.3
MAX_TOKENS = 512

GRAPH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "nodes": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "attributes": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["name", "attributes"],
            },
        },
        "relations": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "node1": {"type": "string"},
                    "node2": {"type": "string"},
                    "type": {"type": "string"},
                },
                "required": ["node1", "node2", "type"],
            },
        },
    },
    "required": ["nodes", "relations"],
}

INSTRUCTIONS = (
    "Read the passage and list its entities and the relations between them. Answer with one "
    'JSON object: {"nodes": [{"name": "...", "attributes": ["..."]}], '
    '"relations": [{"node1": "...", "node2": "...", "type": "..."}]}.'
)
PASSAGE = (
    "Marie Curie was a physicist born in Warsaw. She worked at the University of Paris, "
    "where she shared the 1903 Nobel Prize in Physics with Pierre Curie."
)


def test_extracts_graph_json_under_a_schema(llama_base_url: str) -> None:
    """The request shape our extraction uses, straight to the server: JSON of the right shape."""
    with openai.OpenAI(
        base_url=llama_base_url, api_key="local", timeout=REQUEST_TIMEOUT_S, max_retries=0
    ) as client:
        answer = client.chat.completions.create(
            model="gemma3-270m",
            # The `gemma` chat format drops system messages: instructions go in the user turn.
            messages=[{"role": "user", "content": f"{INSTRUCTIONS}\n\nPassage:\n{PASSAGE}"}],
            # llama-cpp-python takes the schema inside a json_object response_format (it answers
            # OpenAI's `json_schema` with a 500); extra_body sends it as is.
            extra_body={"response_format": {"type": "json_object", "schema": GRAPH_SCHEMA}},
            temperature=TEMPERATURE,
            max_tokens=MAX_TOKENS,
        )
    content = answer.choices[0].message.content
    assert content is not None
    graph = json.loads(content)
    assert isinstance(graph["nodes"], list)
    assert isinstance(graph["relations"], list)
    for node in graph["nodes"]:
        assert isinstance(node["name"], str)
        assert all(isinstance(a, str) for a in node["attributes"])
    for relation in graph["relations"]:
        assert all(isinstance(relation[key], str) for key in ("node1", "node2", "type"))
