"""The chat request that asks a model for the graph of one chunk.

Messages: the system protocol of `prompt_templates/extract_graph.yaml`, followed by the knowledge
base's custom instructions and relation labels (the template's fragments); then, when the KB has
a usable few-shot example (a text plus nodes or relations), that text as a user turn and its
graph as the assistant's reply; last, the chunk as the user turn. Showing the example as a past
exchange teaches a small model the reply format better than describing it.

`response_format` constrains the reply with a JSON schema in the shape both llama.cpp servers
accept (`{"type": "json_object", "schema": ...}`). With strict tags the relation type is an
enum of the tags. Caps are left to the parser: length limits in a schema make llama.cpp grammars
large and slow.

The request also lists the example names the prompt shows (the system text's quoted phrases and
`<...>` slots, the few-shot example's entities): the parser drops those a weak model copies into
a chunk's graph without the chunk naming them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from graphrag.extraction.models import ExtractConfig
from graphrag.extraction.name_guard import prompt_example_names
from graphrag.graph.models import GraphData
from graphrag.llm.messages import ChatMessage
from graphrag.llm.prompts import PromptTemplate, load_prompt
from graphrag.settings import ExtractionSettings
from graphrag.value_model import ValueModel

__all__ = [
    "EXTRACT_GRAPH_PROMPT",
    "ExtractionRequest",
    "build_extraction_messages",
    "build_extraction_request",
    "graph_json_schema",
    "graph_response_format",
]

EXTRACT_GRAPH_PROMPT = "extract_graph"


class ExtractionRequest(ValueModel):
    """What the extractor sends for one chunk: messages, the reply's JSON constraint, and the
    example names those messages show."""

    messages: list[ChatMessage]
    response_format: dict[str, Any]
    example_names: list[str]


def _tag_lines(tags: Sequence[str]) -> str:
    return "\n".join(f"- {tag}" for tag in tags)


def _example_reply(config: ExtractConfig) -> str:
    example = GraphData(nodes=config.nodes, relations=config.relations)
    payload = example.model_dump(mode="json")
    return json.dumps(payload, ensure_ascii=False)


def build_extraction_messages(
    config: ExtractConfig,
    chunk_text: str,
    template: PromptTemplate,
    *,
    strict_tags: bool,
) -> list[ChatMessage]:
    """The chat messages asking for the graph of `chunk_text` under the KB's `config`.

    `strict_tags` says whether relation types outside `config.tags` will be dropped (the
    prompt then asks for tags only) or kept (the prompt only prefers them).
    """
    system_parts = [template.render(text=chunk_text).system or ""]
    if config.custom_instructions:
        system_parts.append(
            template.render_fragment("custom_instructions", instructions=config.custom_instructions)
        )
    if config.tags:
        fragment = "tags_strict" if strict_tags else "tags_preferred"
        system_parts.append(template.render_fragment(fragment, tags=_tag_lines(config.tags)))
    messages = [ChatMessage(role="system", content="\n".join(p.strip() for p in system_parts))]
    if config.has_example:
        messages += [
            ChatMessage(role="user", content=_user_turn(template, config.text)),
            ChatMessage(role="assistant", content=_example_reply(config)),
        ]
    messages.append(ChatMessage(role="user", content=_user_turn(template, chunk_text)))
    return messages


def _user_turn(template: PromptTemplate, text: str) -> str:
    return (template.render(text=text).user or text).strip()


def graph_json_schema(tags: Sequence[str], *, strict_tags: bool) -> dict[str, Any]:
    """The JSON schema of the reply; relation types are limited to `tags` when strict."""
    type_schema: dict[str, Any] = {"type": "string"}
    if strict_tags and tags:
        type_schema["enum"] = list(tags)
    node = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "attributes": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["name", "attributes"],
    }
    relation = {
        "type": "object",
        "properties": {
            "node1": {"type": "string"},
            "node2": {"type": "string"},
            "type": type_schema,
        },
        "required": ["node1", "node2", "type"],
    }
    return {
        "type": "object",
        "properties": {
            "nodes": {"type": "array", "items": node},
            "relations": {"type": "array", "items": relation},
        },
        "required": ["nodes", "relations"],
    }


def graph_response_format(tags: Sequence[str], *, strict_tags: bool) -> dict[str, Any]:
    """`response_format` for the chat request, as llama.cpp servers accept it."""
    return {"type": "json_object", "schema": graph_json_schema(tags, strict_tags=strict_tags)}


def build_extraction_request(
    config: ExtractConfig, chunk_text: str, settings: ExtractionSettings
) -> ExtractionRequest:
    """Messages and response format for one chunk, with the templates folder of `settings`."""
    template = load_prompt(EXTRACT_GRAPH_PROMPT, settings.prompt_templates_dir)
    strict = not settings.keep_relations_outside_tags
    messages = build_extraction_messages(config, chunk_text, template, strict_tags=strict)
    return ExtractionRequest(
        messages=messages,
        response_format=graph_response_format(config.tags, strict_tags=strict),
        example_names=_example_names(config, messages[0].content, settings.max_name_chars),
    )


def _example_names(config: ExtractConfig, system_text: str, max_chars: int) -> list[str]:
    names = prompt_example_names(system_text, max_chars)
    if config.has_example:
        names += [node.name for node in config.nodes]
        names += [end for rel in config.relations for end in (rel.node1, rel.node2)]
    return names
