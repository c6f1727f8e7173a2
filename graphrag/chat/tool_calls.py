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
import re
from enum import StrEnum
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from graphrag.llm.client import WireToolCall

__all__ = ["CallSource", "InvalidToolCall", "ParsedReply", "ToolCall", "parse_reply"]

_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_FUNCTION = re.compile(r"<function=([^>\s]+)\s*>(.*?)</function>", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\s]+)\s*>(.*?)</parameter>", re.DOTALL)
_OPEN_TAG = re.compile(r"<tool_call>|<function=")
_XML_ID = "xml_{}"


class CallSource(StrEnum):
    """Where the calls of a reply were found."""

    NONE = "none"
    NATIVE = "native"
    XML = "xml"


class ToolCall(BaseModel):
    """A call that could be read: a tool name and an object of arguments."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class InvalidToolCall(BaseModel):
    """A call that could not be read, with what was wrong and the raw text."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str | None
    reason: str
    raw: str


class ParsedReply(BaseModel):
    """The reply's text (written calls removed) and its calls, valid or not, in order."""

    model_config = ConfigDict(frozen=True)

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


def _parameter_value(text: str) -> Any:
    value = text.strip()
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def _function_call(call_id: str, name: str, body: str, raw: str) -> ToolCall | InvalidToolCall:
    """`<function=NAME>` whose body is JSON arguments or `<parameter=KEY>` pairs."""
    pairs = _PARAMETER.findall(body)
    if pairs:
        arguments = {key: _parameter_value(value) for key, value in pairs}
        return _make(call_id, name, arguments, raw)
    return _make(call_id, name, body, raw)


def _tool_call_block(call_id: str, body: str, raw: str) -> ToolCall | InvalidToolCall:
    function = _FUNCTION.search(body)
    if function is not None:
        return _function_call(call_id, function.group(1), function.group(2), raw)
    try:
        payload = json.loads(body.strip())
    except json.JSONDecodeError as exc:
        return InvalidToolCall(
            id=call_id, name=None, reason=f"the call is not valid JSON ({exc.msg})", raw=raw
        )
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
    blocks = [
        _Block(m.start(), m.end(), m.group(1), None, m.group(0))
        for m in _TOOL_CALL.finditer(content)
    ]
    for m in _FUNCTION.finditer(content):
        if not any(b.start <= m.start() < b.end for b in blocks):
            blocks.append(_Block(m.start(), m.end(), m.group(2), m.group(1), m.group(0)))
    return sorted(blocks, key=lambda b: b.start)


def _written(content: str) -> tuple[str, list[ToolCall | InvalidToolCall]]:
    """Calls written in the text, in order, and the text without them."""
    calls: list[ToolCall | InvalidToolCall] = []
    text = content
    for index, block in enumerate(_blocks(content)):
        call_id = _XML_ID.format(index)
        if block.name is None:
            calls.append(_tool_call_block(call_id, block.body, block.raw))
        else:
            calls.append(_function_call(call_id, block.name, block.body, block.raw))
        text = text.replace(block.raw, "")
    left_open = _OPEN_TAG.search(text)
    if left_open is not None:
        call_id = _XML_ID.format(len(calls))
        raw = text[left_open.start() :]
        reason = "the call was cut off before its closing tag"
        calls.append(InvalidToolCall(id=call_id, name=None, reason=reason, raw=raw))
        text = text[: left_open.start()]
    return text.strip(), calls


def parse_reply(content: str, native: list[WireToolCall]) -> ParsedReply:
    """The calls of a reply: the native ones when there are any, else those written in it."""
    if native:
        return ParsedReply(content=content.strip(), calls=_native(native), source=CallSource.NATIVE)
    text, calls = _written(content)
    source = CallSource.XML if calls else CallSource.NONE
    return ParsedReply(content=text, calls=calls, source=source)
