"""Reading tool calls from a reply: native `tool_calls`, else the XML forms in the text."""

from __future__ import annotations

from typing import Any

import pytest

from graphrag.chat.tool_calls import CallSource, InvalidToolCall, ToolCall, parse_reply
from graphrag.llm.messages import WireToolCall

pytestmark = pytest.mark.unit


def _native(name: str, arguments: str, call_id: str = "call_1") -> WireToolCall:
    return WireToolCall(id=call_id, name=name, arguments=arguments)


# (case id, content, native calls, expected calls, expected content, expected source)
# An expected call is ("ok", name, arguments) or ("invalid", name or None, reason fragment).
CASES: list[tuple[str, str, list[WireToolCall], list[tuple[Any, ...]], str, CallSource]] = [
    (
        "native",
        "",
        [_native("knowledge_search", '{"query": "bees"}')],
        [("ok", "knowledge_search", {"query": "bees"})],
        "",
        CallSource.NATIVE,
    ),
    (
        "native with empty arguments",
        "Looking.",
        [_native("knowledge_search", "")],
        [("ok", "knowledge_search", {})],
        "Looking.",
        CallSource.NATIVE,
    ),
    (
        "native with broken JSON",
        "",
        [_native("knowledge_search", '{"query": ')],
        [("invalid", "knowledge_search", "not valid JSON")],
        "",
        CallSource.NATIVE,
    ),
    (
        "native with a list for arguments",
        "",
        [_native("knowledge_search", '["bees"]')],
        [("invalid", "knowledge_search", "must be a JSON object")],
        "",
        CallSource.NATIVE,
    ),
    (
        "native wins over text that looks like a call",
        '<tool_call>{"name": "other", "arguments": {}}</tool_call>',
        [_native("knowledge_search", '{"query": "x"}')],
        [("ok", "knowledge_search", {"query": "x"})],
        '<tool_call>{"name": "other", "arguments": {}}</tool_call>',
        CallSource.NATIVE,
    ),
    (
        "tool_call block",
        'Let me check.\n<tool_call>\n{"name": "query_knowledge_graph", '
        '"arguments": {"entities": ["Elin Brask"]}}\n</tool_call>',
        [],
        [("ok", "query_knowledge_graph", {"entities": ["Elin Brask"]})],
        "Let me check.",
        CallSource.XML,
    ),
    (
        "tool_call block with arguments as a JSON string",
        '<tool_call>{"name": "knowledge_search", "arguments": "{\\"query\\": \\"bees\\"}"}'
        "</tool_call>",
        [],
        [("ok", "knowledge_search", {"query": "bees"})],
        "",
        CallSource.XML,
    ),
    (
        "function form with JSON",
        '<function=query_knowledge_graph>{"entities": ["Zorvath"]}</function>',
        [],
        [("ok", "query_knowledge_graph", {"entities": ["Zorvath"]})],
        "",
        CallSource.XML,
    ),
    (
        "function form with parameters inside a tool_call block",
        "<tool_call>\n<function=knowledge_search>\n<parameter=query>\nbee keeping\n</parameter>\n"
        "</function>\n</tool_call>",
        [],
        [("ok", "knowledge_search", {"query": "bee keeping"})],
        "",
        CallSource.XML,
    ),
    (
        "parameter holding JSON",
        '<function=query_knowledge_graph><parameter=entities>["A", "B"]</parameter></function>',
        [],
        [("ok", "query_knowledge_graph", {"entities": ["A", "B"]})],
        "",
        CallSource.XML,
    ),
    (
        "two calls in order, text kept",
        'First <function=knowledge_search>{"query": "a"}</function> then '
        '<tool_call>{"name": "knowledge_search", "arguments": {"query": "b"}}</tool_call> done',
        [],
        [
            ("ok", "knowledge_search", {"query": "a"}),
            ("ok", "knowledge_search", {"query": "b"}),
        ],
        "First  then  done",
        CallSource.XML,
    ),
    (
        "tool_call block that is not JSON",
        "<tool_call>search for bees</tool_call>",
        [],
        [("invalid", None, "not valid JSON")],
        "",
        CallSource.XML,
    ),
    (
        "tool_call block without a name",
        '<tool_call>{"arguments": {"query": "x"}}</tool_call>',
        [],
        [("invalid", None, "names no tool")],
        "",
        CallSource.XML,
    ),
    (
        "function form with broken JSON",
        '<function=knowledge_search>{"query": </function>',
        [],
        [("invalid", "knowledge_search", "not valid JSON")],
        "",
        CallSource.XML,
    ),
    (
        "block cut off before its closing tag",
        'Sure. <tool_call>{"name": "knowledge_search", "arguments": {"query": "be',
        [],
        [("invalid", None, "cut off")],
        "Sure.",
        CallSource.XML,
    ),
    (
        "plain answer",
        "Elin Brask runs the plant [1].",
        [],
        [],
        "Elin Brask runs the plant [1].",
        CallSource.NONE,
    ),
]


@pytest.mark.parametrize(
    ("content", "native", "expected", "text", "source"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_parse_reply(
    content: str,
    native: list[WireToolCall],
    expected: list[tuple[Any, ...]],
    text: str,
    source: CallSource,
) -> None:
    parsed = parse_reply(content, native)
    assert parsed.source is source
    assert parsed.content == text
    assert len(parsed.calls) == len(expected)
    for call, (kind, name, third) in zip(parsed.calls, expected, strict=True):
        assert call.name == name
        if kind == "ok":
            assert isinstance(call, ToolCall) and call.arguments == third
        else:
            assert isinstance(call, InvalidToolCall) and third in call.reason


def test_call_ids_are_distinct_and_native_ids_kept() -> None:
    native = [_native("a", "{}", "n1"), _native("b", "{}", "n2")]
    assert [c.id for c in parse_reply("", native).calls] == ["n1", "n2"]
    written = '<function=a>{}</function><function=b>{}</function><tool_call>{"name'
    ids = [c.id for c in parse_reply(written, []).calls]
    assert len(ids) == 3 and len(set(ids)) == 3
