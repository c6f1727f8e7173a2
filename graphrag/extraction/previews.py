"""Admin previews that help set up a knowledge base's extraction config before turning it on.

- `preview_relations`: the graph the model reads from a sample text, asked and parsed exactly
  as ingestion does (`build_extraction_request` + `parse_graph_output`), with relations whose
  type is not one of the chosen labels removed;
- `write_sample_text`: the model writes a passage that uses the given labels
  (`prompt_templates/fabri_text.yaml`);
- `suggest_tags`: the model proposes relation labels for a text (`fabri_tag.yaml`); its JSON
  list is read tolerantly (fences, reasoning, an object wrapping the list, bullets).

Texts are limited in characters (code points), not bytes; every answer is cut at
`previews.max_tokens`. The model being down or failing is `LlmUnavailableError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Annotated, Any, Protocol

import json_repair
from pydantic import BaseModel, ConfigDict, Field

from graphrag.errors import InvalidInputError, LlmUnavailableError
from graphrag.extraction.graph_cleanup import ParseOptions
from graphrag.extraction.models import ExtractConfig, check_extract_config
from graphrag.extraction.output_parser import OutputKind, parse_graph_output
from graphrag.extraction.prompt_builder import build_extraction_request
from graphrag.graph.models import GraphRelation, normalize_space
from graphrag.llm.client import LlmReply
from graphrag.llm.messages import ChatMessage
from graphrag.llm.prompts import PromptTemplate, load_prompt
from graphrag.settings import ExtractionSettings, PreviewSettings
from graphrag.text_input import Bounded, InputText, RequestModel
from graphrag.text_scan import fenced_bodies, last_closing_end, remove_closed_blocks

__all__ = [
    "CompletionModel",
    "ExtractionPreview",
    "PreviewNode",
    "SampleText",
    "SampleTextRequest",
    "TagSuggestionRequest",
    "TagSuggestions",
    "TextRelationRequest",
    "parse_tag_list",
    "preview_relations",
    "suggest_tags",
    "write_sample_text",
]

SAMPLE_TEXT_PROMPT = "fabri_text"
SUGGEST_TAGS_PROMPT = "fabri_tag"

_REASONING_TAGS = ("think", "thinking", "reasoning")
_BULLET_MARKS = "-*\u2022"
_NUMBER_MARKS = ".)"
_SURROGATE = re.compile("[\ud800-\udfff]")
_TAG_EDGES = "\"'`.,;:[]{}() "
_LABEL_KEYS = ("type", "label", "name", "relation", "tag")


class CompletionModel(Protocol):
    """The one call the previews make: a chat completion, optionally JSON-constrained."""

    def complete(
        self,
        messages: list[ChatMessage],
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> LlmReply: ...


Tags = Annotated[list[InputText], Bounded("extraction.max_tags")]


class TextRelationRequest(RequestModel):
    """A sample text and the relation labels to try on it."""

    model_config = ConfigDict(extra="forbid")

    text: InputText = Field(
        description="the text to read, at most `previews.max_text_chars` characters"
    )
    tags: Tags = Field(min_length=1, description="relation labels; other types are removed")


class PreviewNode(BaseModel):
    """An entity of the preview."""

    name: str
    attributes: list[str]


class ExtractionPreview(BaseModel):
    """What extraction would store for the text, and how the model's answer was read."""

    nodes: list[PreviewNode]
    relations: list[GraphRelation]
    output_kind: OutputKind = Field(description="ok, repaired, empty, prose or unrecognized")
    dropped_relations: int = Field(description="relations removed (outside the labels, invalid)")


class SampleTextRequest(RequestModel):
    """Relation labels the sample should illustrate (optional)."""

    model_config = ConfigDict(extra="forbid")

    tags: Tags = Field(default_factory=list)


class SampleText(BaseModel):
    text: str


class TagSuggestionRequest(RequestModel):
    """A text to suggest relation labels for."""

    model_config = ConfigDict(extra="forbid")

    text: InputText = Field(description="at most `previews.max_text_chars` characters")


class TagSuggestions(BaseModel):
    tags: list[str]


def _checked_text(text: str, limits: PreviewSettings) -> str:
    """`text` if within the limit in characters; lone surrogates (unencodable) become U+FFFD."""
    if len(text) > limits.max_text_chars:
        raise InvalidInputError(
            f"the text has {len(text)} characters; the limit is {limits.max_text_chars} characters",
            limit=limits.max_text_chars,
            length=len(text),
        )
    if not text.strip():
        raise InvalidInputError("the text is empty")
    return _SURROGATE.sub("\ufffd", text)


def _checked_tags(tags: Sequence[str], extraction: ExtractionSettings) -> list[str]:
    config = ExtractConfig(tags=[_SURROGATE.sub("\ufffd", tag) for tag in tags])
    check_extract_config(config, extraction)
    return config.tags


def _strip_reasoning(text: str) -> str:
    answer = remove_closed_blocks(text, _REASONING_TAGS)
    last_close = last_closing_end(answer, _REASONING_TAGS)
    return answer[last_close:] if last_close >= 0 else answer


def preview_relations(
    llm: CompletionModel,
    extraction: ExtractionSettings,
    limits: PreviewSettings,
    body: TextRelationRequest,
) -> ExtractionPreview:
    """The nodes and relations the model reads from `body.text` with only `body.tags` kept."""
    text = _checked_text(body.text, limits)
    tags = _checked_tags(body.tags, extraction)
    if not tags:
        raise InvalidInputError("give at least one relation label (tags)")
    # The preview shows the chosen labels only, whatever the server keeps during ingestion.
    strict = extraction.model_copy(update={"keep_relations_outside_tags": False})
    config = ExtractConfig(enabled=True, tags=tags)
    request = build_extraction_request(config, text, strict)
    reply = llm.complete(request.messages, request.response_format, limits.max_tokens)
    options = ParseOptions.from_settings(
        strict, tags, example_names=request.example_names, chunk_text=text
    )
    outcome = parse_graph_output(reply.content, options)
    return ExtractionPreview(
        nodes=[PreviewNode(name=n.name, attributes=n.attributes) for n in outcome.data.nodes],
        relations=outcome.data.relations,
        output_kind=outcome.kind,
        dropped_relations=outcome.dropped_relations,
    )


def _ask(
    llm: CompletionModel, template: PromptTemplate, limits: PreviewSettings, **values: str
) -> str:
    """The model's reply to `template` filled with `values`, within the previews' token cap."""
    return llm.complete(template.render(**values).messages(), max_tokens=limits.max_tokens).content


def write_sample_text(
    llm: CompletionModel,
    extraction: ExtractionSettings,
    limits: PreviewSettings,
    body: SampleTextRequest,
) -> SampleText:
    """A passage written by the model to illustrate `body.tags`, cut to the preview limit."""
    tags = _checked_tags(body.tags, extraction)
    template = load_prompt(SAMPLE_TEXT_PROMPT, extraction.prompt_templates_dir)
    listed = "\n".join(f"- {tag}" for tag in tags) or template.render_fragment("no_tags")
    text = _strip_reasoning(_ask(llm, template, limits, tags=listed)).strip()
    if not text:
        raise LlmUnavailableError("the model returned no text; try again")
    return SampleText(text=text[: limits.max_text_chars].rstrip())


def suggest_tags(
    llm: CompletionModel,
    extraction: ExtractionSettings,
    limits: PreviewSettings,
    body: TagSuggestionRequest,
) -> TagSuggestions:
    """Relation labels the model proposes for `body.text` (possibly none)."""
    text = _checked_text(body.text, limits)
    template = load_prompt(SUGGEST_TAGS_PROMPT, extraction.prompt_templates_dir)
    reply = _ask(llm, template, limits, text=text)
    labels = parse_tag_list(reply, limits.max_suggested_tags, extraction.max_name_chars)
    return TagSuggestions(tags=labels)


def parse_tag_list(text: str | None, max_tags: int, max_chars: int) -> list[str]:
    """Labels from a model's answer: a JSON list of strings ideally, read tolerantly.

    Accepted too: the list inside a fence or after reasoning, an object holding the list, items
    that are objects (their `type`/`label`/`name`), a truncated list, and, with no JSON at all,
    bulleted or numbered lines or one comma-separated line. Labels are whitespace-normalised,
    trimmed of quotes and punctuation, de-duplicated ignoring case, and capped.
    """
    answer = _strip_reasoning(text or "")
    raw: list[str] = []
    for piece in fenced_bodies(answer) or [answer]:
        raw.extend(_strings(_decode(piece)))
    if not raw:
        raw = _bullets(answer)
    return _clean_labels(raw, max_tags, max_chars)


def _decode(piece: str) -> Any:
    starts = [i for i in (piece.find("["), piece.find("{")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    try:
        return json.JSONDecoder().raw_decode(piece, start)[0]
    except (ValueError, RecursionError):
        pass
    try:
        return json_repair.loads(piece[start:])
    except (ValueError, RecursionError):  # nested past the recursion limit: nothing to read
        return None


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        return _strings(lists[0]) if lists else []
    if not isinstance(value, list):
        return []
    found: list[str] = []
    for item in value:
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            label = next((item[k] for k in _LABEL_KEYS if isinstance(item.get(k), str)), None)
            if label is not None:
                found.append(label)
    return found


def _bullet_item(line: str) -> str | None:
    """The item of a `- item`, `* item`, `1. item` or `2) item` line, else None."""
    text = line.strip()
    mark = 0
    if text[:1] and text[0] in _BULLET_MARKS:
        mark = 1
    else:
        while mark < len(text) and text[mark].isdecimal():
            mark += 1
        if mark == 0 or text[mark : mark + 1] not in tuple(_NUMBER_MARKS):
            return None
        mark += 1
    if not text[mark : mark + 1].isspace():
        return None
    return text[mark:].strip() or None


def _bullets(answer: str) -> list[str]:
    bulleted = [item for line in answer.splitlines() if (item := _bullet_item(line)) is not None]
    if bulleted:
        return bulleted
    # One line of comma-separated labels; a lone sentence is prose, not a label.
    lines = [line for line in answer.strip().splitlines() if line.strip()]
    return lines[0].split(",") if len(lines) == 1 and "," in lines[0] else []


def _clean_labels(raw: list[str], max_tags: int, max_chars: int) -> list[str]:
    labels: dict[str, str] = {}
    for item in raw:
        label = normalize_space(item).strip(_TAG_EDGES)
        if label and len(label) <= max_chars:
            labels.setdefault(label.casefold(), label)
    return list(labels.values())[:max_tags]
