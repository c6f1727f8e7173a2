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
from collections.abc import Iterator
from enum import StrEnum
from typing import Any

import json_repair

from graphrag.extraction.graph_cleanup import CleanedGraph, ParseOptions, clean_graph
from graphrag.extraction.output_shapes import RawGraph, read_graph_value
from graphrag.graph.models import GraphData
from graphrag.text_scan import (
    NextFinder,
    ascii_lower,
    blocks,
    fenced_bodies,
    is_word_char,
    last_closing_end,
    remove_closed_blocks,
    skip_spaces,
    split_on_any,
)

__all__ = ["OutputKind", "ParseOptions", "ParseOutcome", "parse_graph_output"]

_REASONING_TAGS = ("think", "thinking", "reasoning")
_REASONING_OPENINGS = tuple(f"<{tag}>" for tag in _REASONING_TAGS)
_CHANNEL, _FINAL, _MESSAGE = "<|channel|>", "final", "<|message|>"
_TOOL_CALL = ("<tool_call>", "</tool_call>")
_FUNCTION = ("<function", "</function>")
_PARAMETER = ("<parameter", "</parameter>")
_NAME_ATTRIBUTE = "name="
_QUOTES = "\"'"
# A tag name ends at one of these; a name running into another tag or line is no tag name.
_NAME_STOPS = frozenset(">\"'<\n")
_PYTHON_TAG = "<|python_tag|>"
_OPENERS = "{["
# What follows a bracket (after blanks) that opens JSON rather than prose: `{"`, `{'`, `{}`,
# `{key:`, `[{`, `["`, `[]`...
_JSON_AFTER = {"{": "\"'{}", "[": "\"'{[]"}
_CLOSERS = ("}", "]")
# A graph answer is three or four levels deep; the repairer spends thousands of steps per level
# on a deep pile of brackets before it gives up at its recursion limit, so such text is not
# repaired at all.
_MAX_REPAIR_DEPTH = 32
# What decoding may raise on model output: bad JSON, or nesting past the recursion limit.
_UNDECODABLE = (ValueError, RecursionError)


class OutputKind(StrEnum):
    """What the model's answer was; none of these is worth a retry of the same call."""

    OK = "ok"  # well-formed JSON of a graph shape (after removing fences, reasoning, markup)
    REPAIRED = "repaired"  # the JSON was truncated or malformed and had to be repaired
    EMPTY = "empty"  # nothing, or reasoning only
    PROSE = "prose"  # text without usable JSON: a refusal or a comment
    UNRECOGNIZED = "unrecognized"  # valid JSON of no graph shape


class ParseOutcome(CleanedGraph):
    """The graph read from one answer, what the answer was, and what the cleanup dropped."""

    kind: OutputKind


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
        drops=cleaned.drops,
    )


def _strip_reasoning(text: str) -> str:
    """The answer without the model's reasoning.

    A closing tag without its opening means the chat template opened the block: everything before
    it is reasoning. An opening tag never closed means the answer ran out inside the reasoning:
    its text is kept, so JSON written there can still be salvaged.
    """
    text = remove_closed_blocks(_after_final_channel(text), _REASONING_TAGS)
    last_close = last_closing_end(text, _REASONING_TAGS)
    if last_close >= 0:
        text = text[last_close:]
    unwrapped = "".join(split_on_any(text, _REASONING_OPENINGS, fold=True, strip=False))
    return unwrapped.replace(_PYTHON_TAG, "")


def _after_final_channel(text: str) -> str:
    """The text after the last `<|channel|> final <|message|>` marker (all of it if none)."""
    folded = ascii_lower(text)
    start = -1
    pos = folded.find(_CHANNEL)
    while pos >= 0:
        at = skip_spaces(folded, pos + len(_CHANNEL))
        if folded.startswith(_FINAL, at):
            at = skip_spaces(folded, at + len(_FINAL))
            if folded.startswith(_MESSAGE, at):
                start = at + len(_MESSAGE)
        pos = folded.find(_CHANNEL, pos + len(_CHANNEL))
    return text if start < 0 else text[start:]


def _tag_name_end(folded: str, pos: int) -> tuple[int, int, int] | None:
    """After `<function` or `<parameter`: `=NAME>` or ` name="NAME">` -> where the name starts
    and ends, and where the tag ends."""
    if folded.startswith("=", pos):
        pos += 1
    else:
        after = skip_spaces(folded, pos)
        if after == pos or not folded.startswith(_NAME_ATTRIBUTE, after):
            return None
        pos = after + len(_NAME_ATTRIBUTE)
    if folded.startswith(tuple(_QUOTES), pos):
        pos += 1
    name_start = pos
    while pos < len(folded) and folded[pos] not in _NAME_STOPS:
        pos += 1
    name_end = pos
    if folded.startswith(tuple(_QUOTES), pos):
        pos += 1
    if not folded.startswith(">", pos):
        return None
    return name_start, name_end, pos + 1


def _tagged_sections(text: str, tag: tuple[str, str], *, next_ends: bool) -> list[tuple[str, str]]:
    """(name, body) of each `<tag=NAME>body</tag>` of `text`, in order, case-insensitive.

    A section not closed runs to the end, or with `next_ends` to the next opening tag.
    """
    opening, closing = tag
    folded = ascii_lower(text)
    openings, closings = NextFinder(folded, opening), NextFinder(folded, closing)
    sections: list[tuple[str, str]] = []
    pos = 0
    while (start := openings.find(pos)) >= 0:
        head = _tag_name_end(folded, start + len(opening))
        if head is None:
            pos = start + 1
            continue
        name_start, name_end, body_start = head
        ends = [closings.find(body_start), openings.find(body_start) if next_ends else -1]
        ends = [end for end in ends if end >= 0]
        body_end = min(ends, default=len(text))
        sections.append((text[name_start:name_end], text[body_start:body_end]))
        if body_end == len(text):
            break
        pos = body_end + len(closing) if folded.startswith(closing, body_end) else body_end
    return sections


def _pieces(answer: str) -> list[str | dict[str, Any]]:
    """Units to decode: each tool call, function body or parameter set, each fenced block;
    else the whole answer."""
    calls = [answer[b.body_start : b.body_end] for b in blocks(answer, *_TOOL_CALL, until_end=True)]
    pieces: list[str | dict[str, Any]] = []
    for call in calls or [answer]:
        bodies = [body for _, body in _tagged_sections(call, _FUNCTION, next_ends=False)]
        for body in bodies or [call]:
            parameters = [
                (name, value)
                for name, value in _tagged_sections(body, _PARAMETER, next_ends=True)
                if name.strip()
            ]
            if parameters:
                pieces.append({name.strip(): _decode_loose(value) for name, value in parameters})
                continue
            pieces.extend(fenced_bodies(body) or [body])
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
    except _UNDECODABLE:
        pass
    else:
        yield strict, False
    spans = _top_level_spans(stripped)
    decoder = json.JSONDecoder()
    for start, _ in spans:
        try:
            prefix = decoder.raw_decode(stripped, start)[0]
        except _UNDECODABLE:
            continue
        yield prefix, False
    json_like = [(start, end) for start, end in spans if _opens_json(stripped, start)]
    if json_like:
        start, end = max(json_like, key=lambda span: span[1] - span[0])
        if _max_depth(stripped, start, end) <= _MAX_REPAIR_DEPTH:
            yield _repair(stripped[start:end]), True


def _opens_json(text: str, start: int) -> bool:
    """Whether the bracket at `start` opens JSON: a quote, a bracket, or (objects) `key:`."""
    pos = skip_spaces(text, start + 1)
    if text.startswith(tuple(_JSON_AFTER[text[start]]), pos):
        return True
    if text[start] != "{":
        return False
    key_end = pos
    while key_end < len(text) and is_word_char(text[key_end]):
        key_end += 1
    return key_end > pos and text.startswith(":", skip_spaces(text, key_end))


def _max_depth(text: str, start: int, end: int) -> int:
    """The deepest bracket nesting in `text[start:end]` (brackets in strings count too)."""
    depth = deepest = 0
    for char in text[start:end]:
        if char in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        elif char in _CLOSERS and depth > 0:
            depth -= 1
    return deepest


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
    try:
        return json_repair.loads(text)
    except _UNDECODABLE:  # nested past the repairer's recursion limit: nothing to read
        return None
