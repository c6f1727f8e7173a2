"""Read a local model's extraction answer into `GraphData`, whatever it looks like.

The text is peeled first: reasoning (`<think>...</think>`, also unclosed or with only the closing
tag, and the "final" channel of harmony-style answers), tool-call markup (`<tool_call>`,
`<function=...>` with or without `<parameter=...>`) and Markdown code fences. Each piece is then
decoded as JSON: strictly, or from its first bracket when prose surrounds it, or else repaired
(truncated output is cut back to its last complete object first, so a half-written name never
becomes an entity). `output_shapes` reads the decoded value, `graph_cleanup` tidies it.

A prose answer (a refusal, commentary on a table of contents) or an empty one gives an empty
graph and says so in `kind`: asking again would only cost another call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from enum import StrEnum
from typing import Any

import json_repair
from pydantic import BaseModel, ConfigDict

from graphrag.extraction.graph_cleanup import ParseOptions, clean_graph
from graphrag.extraction.output_shapes import RawGraph, read_graph_value
from graphrag.graph.models import GraphData

__all__ = ["OutputKind", "ParseOptions", "ParseOutcome", "parse_graph_output"]

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.I)
_THINK_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.I)
_FINAL_CHANNEL = re.compile(r"<\|channel\|>\s*final\s*<\|message\|>", re.I)
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S | re.I)
_FUNCTION = re.compile(
    r"<function(?:=|\s+name=)[\"']?[^>\"']*[\"']?>(.*?)(?:</function>|\Z)", re.S | re.I
)
_PARAMETER = re.compile(
    r"<parameter(?:=|\s+name=)[\"']?([^>\"']+)[\"']?>(.*?)(?:</parameter>|(?=<parameter)|\Z)",
    re.S | re.I,
)
_FENCE = re.compile(r"```[\w-]*[ \t]*\n?(.*?)(?:```|\Z)", re.S)
_PYTHON_TAG = "<|python_tag|>"
_OPENERS = "{["
# A bracket that opens JSON rather than prose: `{"`, `{'`, `{}`, `{key:`, `[{`, `["`, `[]`...
_JSON_OPENING = re.compile(r"""\{\s*(?:["'{}]|\w+\s*:)|\[\s*["'{\[\]]""")
_CLOSERS = ("}", "]")


class OutputKind(StrEnum):
    """What the model's answer was; none of these is worth a retry of the same call."""

    OK = "ok"  # well-formed JSON of a graph shape (after removing fences, reasoning, markup)
    REPAIRED = "repaired"  # the JSON was truncated or malformed and had to be repaired
    EMPTY = "empty"  # nothing, or reasoning only
    PROSE = "prose"  # text without usable JSON: a refusal or a comment
    UNRECOGNIZED = "unrecognized"  # valid JSON of no graph shape


class ParseOutcome(BaseModel):
    """The graph read from one answer, what the answer was, and what the cleanup dropped."""

    model_config = ConfigDict(frozen=True)

    data: GraphData
    kind: OutputKind
    dropped_nodes: int = 0
    dropped_relations: int = 0


def parse_graph_output(text: str | None, options: ParseOptions) -> ParseOutcome:
    """The graph in a model's answer `text`, cleaned per `options`; never raises on bad output."""
    answer = _strip_reasoning(text or "")
    if not answer.strip():
        return ParseOutcome(data=GraphData(), kind=OutputKind.EMPTY)
    found: list[tuple[RawGraph, bool]] = []
    saw_json = False
    for piece in _pieces(answer):
        graph, repaired, decoded = _read_piece(piece)
        saw_json = saw_json or decoded
        if graph is not None:
            found.append((graph, repaired))
    if not found:
        kind = OutputKind.UNRECOGNIZED if saw_json else OutputKind.PROSE
        return ParseOutcome(data=GraphData(), kind=kind)
    merged = RawGraph()
    for graph, _ in found:
        merged.add(graph)
    cleaned = clean_graph(merged, options)
    repaired_any = any(repaired for _, repaired in found)
    return ParseOutcome(
        data=cleaned.data,
        kind=OutputKind.REPAIRED if repaired_any else OutputKind.OK,
        dropped_nodes=cleaned.dropped_nodes,
        dropped_relations=cleaned.dropped_relations,
    )


def _strip_reasoning(text: str) -> str:
    """The answer without the model's reasoning.

    A closing tag without its opening means the chat template opened the block: everything before
    it is reasoning. An opening tag never closed means the answer ran out inside the reasoning:
    its text is kept, so JSON written there can still be salvaged.
    """
    final = _FINAL_CHANNEL.split(text)
    text = final[-1]
    text = _THINK_BLOCK.sub("", text)
    closing = list(_THINK_CLOSE.finditer(text))
    if closing:
        text = text[closing[-1].end() :]
    return _THINK_OPEN.sub("", text).replace(_PYTHON_TAG, "")


def _pieces(answer: str) -> list[str | dict[str, Any]]:
    """Units to decode: each tool call, function body or parameter set, each fenced block;
    else the whole answer."""
    calls = [match.group(1) for match in _TOOL_CALL.finditer(answer)] or [answer]
    pieces: list[str | dict[str, Any]] = []
    for call in calls:
        bodies = [match.group(1) for match in _FUNCTION.finditer(call)] or [call]
        for body in bodies:
            parameters = _PARAMETER.findall(body)
            if parameters:
                pieces.append({name.strip(): _decode_loose(value) for name, value in parameters})
                continue
            fenced = [match.group(1) for match in _FENCE.finditer(body)]
            pieces.extend(fenced or [body])
    return pieces


def _decode_loose(value: str) -> Any:
    """A `<parameter>` value: JSON when it parses (repaired if needed), else the text."""
    stripped = value.strip()
    if stripped[:1] not in _OPENERS:
        return stripped
    decoded, _ = next(_decodings(stripped), (stripped, False))
    return decoded


def _read_piece(piece: str | dict[str, Any]) -> tuple[RawGraph | None, bool, bool]:
    """(graph, whether repair was needed, whether any JSON container was decoded)."""
    if isinstance(piece, dict):
        return read_graph_value(piece), False, True
    saw_json = False
    for value, repaired in _decodings(piece):
        saw_json = saw_json or (not repaired and isinstance(value, dict | list))
        graph = read_graph_value(value, accept_bare_strings=not repaired)
        if graph is not None:
            return graph, repaired, True
    return None, False, saw_json


def _decodings(text: str) -> Iterator[tuple[Any, bool]]:
    """Ever more lenient readings of `text` as JSON: (value, repaired).

    Readings start only at brackets of nesting depth zero: inside a truncated object, its first
    complete inner list would otherwise pass for the whole answer. One repair at most, of the
    longest JSON-looking bracketed span only: the repair library slows down badly on long prose
    full of brackets.
    """
    stripped = text.strip()
    try:
        strict = json.loads(stripped)
    except json.JSONDecodeError:
        pass
    else:
        yield strict, False
    spans = _top_level_spans(stripped)
    decoder = json.JSONDecoder()
    for start, _ in spans:
        try:
            prefix = decoder.raw_decode(stripped, start)[0]
        except json.JSONDecodeError:
            continue
        yield prefix, False
    json_like = [(start, end) for start, end in spans if _JSON_OPENING.match(stripped, start)]
    if json_like:
        start, end = max(json_like, key=lambda span: span[1] - span[0])
        yield _repair(stripped[start:end]), True


def _top_level_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each bracketed region at depth zero; an unclosed one runs to the end.

    Double-quoted strings inside a region are skipped, so brackets in names do not count.
    """
    spans: list[tuple[int, int]] = []
    depth, start = 0, 0
    in_string = escaped = False
    for pos, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char in _OPENERS:
            if depth == 0:
                start = pos
            depth += 1
        elif char in _CLOSERS and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append((start, pos + 1))
        elif char == '"' and depth > 0:
            in_string = True
    if depth > 0:
        spans.append((start, len(text)))
    return spans


def _repair(text: str) -> Any:
    """Repair malformed JSON; truncated JSON is first cut after its last complete object."""
    if not text.rstrip().endswith(_CLOSERS):
        last_object = text.rfind("}")
        if last_object > 0:
            text = text[: last_object + 1]
    return json_repair.loads(text)
