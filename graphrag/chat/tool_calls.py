"""Tool calls read from a model's reply: native `tool_calls` first, else XML in the text.

Some local models (Qwen among them) sometimes write their calls in the content instead of the
native field. Two written forms are read:

- `<tool_call>{"name": "...", "arguments": {...}}</tool_call>`;
- `<function=NAME>{json arguments}</function>`, or with `<parameter=KEY>value</parameter>`
  pairs in place of the JSON, alone or inside a `<tool_call>` block.

A call that cannot be read (bad JSON, no name, arguments that are not an object, a block left
open) is kept as an `InvalidToolCall`, so the model can be told rather than silently ignored.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, NamedTuple

from pydantic import Field

from graphrag.llm.messages import WireToolCall
from graphrag.text_scan import NextFinder, ascii_lower, blocks, skip_spaces
from graphrag.value_model import ValueModel

__all__ = ["CallSource", "InvalidToolCall", "ParsedReply", "ToolCall", "parse_reply"]

_TOOL_CALL = ("<tool_call>", "</tool_call>")
_FUNCTION = ("<function=", "</function>")
_PARAMETER = ("<parameter=", "</parameter>")
_OPEN_TAGS = (_TOOL_CALL[0], _FUNCTION[0])
_XML_ID = "xml_{}"
# JSON nested deeper than the decoder's recursion limit: refused like any other bad JSON.
_TOO_DEEP = "the JSON is nested too deeply"


class CallSource(StrEnum):
    """Where the calls of a reply were found."""

    NONE = "none"
    NATIVE = "native"
    XML = "xml"


class ToolCall(ValueModel):
    """A call that could be read: a tool name and an object of arguments."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class InvalidToolCall(ValueModel):
    """A call that could not be read, with what was wrong and the raw text."""

    id: str
    name: str | None
    reason: str
    raw: str


class ParsedReply(ValueModel):
    """The reply's text (written calls removed) and its calls, valid or not, in order."""

    content: str
    calls: list[ToolCall | InvalidToolCall] = Field(default_factory=list)
    source: CallSource = CallSource.NONE


def _arguments(raw: Any) -> dict[str, Any] | str:
    """The arguments as an object, or why they are not one (a JSON string is decoded once)."""
    value = raw
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return {}
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return f"arguments are not valid JSON ({exc.msg})"
        except RecursionError:
            return _TOO_DEEP
    if value is None:
        return {}
    if not isinstance(value, dict):
        return "arguments must be a JSON object"
    return value


def _make(call_id: str, name: Any, raw_arguments: Any, raw: str) -> ToolCall | InvalidToolCall:
    tool = name.strip() if isinstance(name, str) else ""
    if not tool:
        return InvalidToolCall(id=call_id, name=None, reason="the call names no tool", raw=raw)
    arguments = _arguments(raw_arguments)
    if isinstance(arguments, str):
        return InvalidToolCall(id=call_id, name=tool, reason=arguments, raw=raw)
    return ToolCall(id=call_id, name=tool, arguments=arguments)


def _native(calls: list[WireToolCall]) -> list[ToolCall | InvalidToolCall]:
    return [_make(c.id, c.name, c.arguments, c.arguments) for c in calls]


class _Section(NamedTuple):
    """A `<tag=NAME>body</tag>` of the text: where it starts and ends, its name and body."""

    start: int
    end: int
    name: str
    body: str


def _sections(text: str, tag: tuple[str, str]) -> list[_Section]:
    """Each closed `<tag=NAME>body</tag>` of `text` in order (ASCII case ignored).

    NAME is one or more characters other than `>`, `<` and whitespace; blanks may follow it.
    Scanned forward once: every search starts after the previous one.
    """
    opening, closing = tag
    folded = ascii_lower(text)
    openings, closings = NextFinder(folded, opening), NextFinder(folded, closing)
    found: list[_Section] = []
    pos = 0
    while (start := openings.find(pos)) >= 0:
        name_start = name_end = start + len(opening)
        while name_end < len(text) and text[name_end] not in "<>" and not text[name_end].isspace():
            name_end += 1
        head_end = skip_spaces(text, name_end)
        if name_end == name_start or not text.startswith(">", head_end):
            pos = start + 1
            continue
        close = closings.find(head_end + 1)
        if close < 0:
            break
        end = close + len(closing)
        found.append(_Section(start, end, text[name_start:name_end], text[head_end + 1 : close]))
        pos = end
    return found


def _parameter_value(text: str) -> Any:
    value = text.strip()
    try:
        return json.loads(value)
    except (json.JSONDecodeError, RecursionError):
        return value


def _function_call(call_id: str, name: str, body: str, raw: str) -> ToolCall | InvalidToolCall:
    """`<function=NAME>` whose body is JSON arguments or `<parameter=KEY>` pairs."""
    pairs = _sections(body, _PARAMETER)
    if pairs:
        arguments = {pair.name: _parameter_value(pair.body) for pair in pairs}
        return _make(call_id, name, arguments, raw)
    return _make(call_id, name, body, raw)


def _tool_call_block(call_id: str, body: str, raw: str) -> ToolCall | InvalidToolCall:
    functions = _sections(body, _FUNCTION)
    if functions:
        return _function_call(call_id, functions[0].name, functions[0].body, raw)
    try:
        payload = json.loads(body.strip())
    except json.JSONDecodeError as exc:
        return InvalidToolCall(
            id=call_id, name=None, reason=f"the call is not valid JSON ({exc.msg})", raw=raw
        )
    except RecursionError:
        return InvalidToolCall(id=call_id, name=None, reason=_TOO_DEEP, raw=raw)
    if not isinstance(payload, dict):
        return InvalidToolCall(id=call_id, name=None, reason="the call must be an object", raw=raw)
    return _make(call_id, payload.get("name"), payload.get("arguments"), raw)


class _Block(NamedTuple):
    """A written call: where it sits, its body, the function name if given, its raw text."""

    start: int
    end: int
    body: str
    name: str | None
    raw: str


def _blocks(content: str) -> list[_Block]:
    """`<tool_call>` blocks, then `<function=...>` blocks outside them, in text order."""
    calls = [
        _Block(b.start, b.end, content[b.body_start : b.body_end], None, content[b.start : b.end])
        for b in blocks(content, *_TOOL_CALL, until_end=False)
    ]
    found = list(calls)
    index = 0  # the first call that does not end before the function being placed
    for section in _sections(content, _FUNCTION):
        while index < len(calls) and calls[index].end <= section.start:
            index += 1
        if index < len(calls) and calls[index].start <= section.start:
            continue
        raw = content[section.start : section.end]
        found.append(_Block(section.start, section.end, section.body, section.name, raw))
    return sorted(found, key=lambda b: b.start)


def _written(content: str) -> tuple[str, list[ToolCall | InvalidToolCall]]:
    """Calls written in the text, in order, and the text without them."""
    calls: list[ToolCall | InvalidToolCall] = []
    kept: list[str] = []
    copied = 0
    for index, block in enumerate(_blocks(content)):
        call_id = _XML_ID.format(index)
        if block.name is None:
            calls.append(_tool_call_block(call_id, block.body, block.raw))
        else:
            calls.append(_function_call(call_id, block.name, block.body, block.raw))
        kept.append(content[copied : block.start])
        copied = max(copied, block.end)
    kept.append(content[copied:])
    text = "".join(kept)
    folded = ascii_lower(text)
    left_open = min((at for tag in _OPEN_TAGS if (at := folded.find(tag)) >= 0), default=-1)
    if left_open >= 0:
        call_id = _XML_ID.format(len(calls))
        raw = text[left_open:]
        reason = "the call was cut off before its closing tag"
        calls.append(InvalidToolCall(id=call_id, name=None, reason=reason, raw=raw))
        text = text[:left_open]
    return text.strip(), calls


def parse_reply(content: str, native: list[WireToolCall]) -> ParsedReply:
    """The calls of a reply: the native ones when there are any, else those written in it."""
    if native:
        return ParsedReply(content=content.strip(), calls=_native(native), source=CallSource.NATIVE)
    text, calls = _written(content)
    source = CallSource.XML if calls else CallSource.NONE
    return ParsedReply(content=text, calls=calls, source=source)
