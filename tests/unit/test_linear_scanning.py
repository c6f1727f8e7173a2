"""Text from users and models is scanned in linear time: the work is counted, not timed.

Each reader of untrusted text is fed adversarial inputs of 50,000 and 100,000 characters (the
shapes that made the old regexes backtrack: repeated comments, openings never closed, long
blank runs, piles of brackets). While it runs, a tracer counts every Python line executed
(ours and the libraries') and every call into C. The test asserts:

- the count at 100k is at most a little over twice the count at 50k (linear growth);
- the count stays under a fixed budget per input character;
- no regex runs other than single-character-class ones (a class repeated alone cannot
  backtrack); the backtracking patterns these readers used to apply are thus caught even when
  they happened to finish. The HTML reader's tokenizer is libxml2's, in C, and runs none.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import pytest

from graphrag.chat.agent_evidence import Evidence
from graphrag.chat.tool_calls import parse_reply
from graphrag.db.enums import MessageRole
from graphrag.extraction.output_parser import ParseOptions, parse_graph_output
from graphrag.extraction.previews import parse_tag_list
from graphrag.ingest.graph.selection import has_body
from graphrag.ingest.models import FileType
from graphrag.ingest.parsers.file_types import detect_file_type
from graphrag.ingest.parsers.text import html_to_blocks
from graphrag.memory.mentions import names_in_text
from graphrag.memory.recall_log import RecallEntry
from graphrag.memory.session_facts import deterministic_facts
from graphrag.settings import get_settings
from graphrag.text_scan import collapse_spaces, line_groups

pytestmark = pytest.mark.unit

N = 100_000
GROWTH_MAX = 2.3  # count(N) / count(N / 2); quadratic work would give 4
BUDGET_PER_CHAR = 120  # line events + C calls per input character
# The JSON decoder's own blank skipper: one character class, linear.
ALLOWED_PATTERNS = {r"[ \t\n\r]*"}
SESSION = uuid.UUID("00000000-0000-4000-8000-000000000002")


@dataclass
class Work:
    steps: int = 0
    patterns: set[str] = field(default_factory=set)


def measure(run: Callable[[], object]) -> Work:
    """Run `run` under a line tracer and a C-call profiler; count what it does."""
    work = Work()

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            work.steps += 1
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        return local

    def profiler(frame: FrameType, event: str, arg: Any) -> None:
        if event == "c_call":
            work.steps += 1
            owner = getattr(arg, "__self__", None)
            if isinstance(owner, re.Pattern):
                work.patterns.add(str(owner.pattern))

    sys.settrace(tracer)
    sys.setprofile(profiler)
    try:
        run()
    finally:
        sys.settrace(None)
        sys.setprofile(None)
    return work


def _repeat(unit: str, n: int) -> str:
    return unit * (n // len(unit))


OPTIONS = ParseOptions.from_settings(get_settings().extraction, [])
MEMORY = get_settings().memory
INGEST = get_settings().ingest


def _sniff(text: str) -> FileType:
    return detect_file_type(text.encode(), file_name=None, max_control_ratio=0.01)


def _facts(text: str) -> object:
    messages = [
        RecallEntry(role=MessageRole.USER, content=text, tool_data={}),
        RecallEntry(role=MessageRole.ASSISTANT, content=text, tool_data={}),
    ]
    return deterministic_facts(messages, SESSION, MEMORY)


def _cited(text: str) -> object:
    return Evidence(get_settings().chat).cited(text)


READERS: dict[str, Callable[[str], object]] = {
    "sniff": _sniff,
    "graph_output": lambda text: parse_graph_output(text, OPTIONS),
    "tag_list": lambda text: parse_tag_list(text, 20, 100),
    "tool_calls": lambda text: parse_reply(text, []),
    "citations": _cited,
    "mentions": lambda text: names_in_text(["a", "a a", "b"], text),
    "session_facts": _facts,
    "image_links": has_body,
    "html": lambda text: html_to_blocks(text, INGEST.html_max_depth),
}

CASES: list[tuple[str, Callable[[int], str]]] = [
    ("sniff", lambda n: _repeat("<!---->", n)),
    ("sniff", lambda n: _repeat("<!--", n)),
    ("sniff", lambda n: " " * n + "<html>"),
    ("graph_output", lambda n: _repeat("<think>", n)),
    ("graph_output", lambda n: _repeat("</think><reasoning>", n)),
    ("graph_output", lambda n: _repeat("<|channel|> final ", n)),
    ("graph_output", lambda n: _repeat("<tool_call>", n)),
    ("graph_output", lambda n: _repeat("<function=", n)),
    ("graph_output", lambda n: _repeat("<function name='a", n)),
    ("graph_output", lambda n: "<function=a>" + _repeat("<parameter=", n)),
    ("graph_output", lambda n: _repeat("<parameter=x>", n)),
    ("graph_output", lambda n: _repeat("```", n)),
    ("graph_output", lambda n: _repeat("{", n)),
    ("graph_output", lambda n: _repeat("[", n)),
    ("graph_output", lambda n: _repeat('{"a":', n)),
    ("graph_output", lambda n: '{"nodes": [{"name": "' + "x" * n),
    ("graph_output", lambda n: json.dumps({"relations": ["a" + " " * n + "b"]})),
    ("graph_output", lambda n: json.dumps({"relations": [_repeat("-[ ", n)]})),
    ("graph_output", lambda n: json.dumps({"relations": [_repeat(" |", n)]})),
    ("graph_output", lambda n: _repeat("I cannot [sorry] ", n)),
    ("tag_list", lambda n: "\n" * n),
    ("tag_list", lambda n: "- a" + " " * n + "b"),
    ("tag_list", lambda n: _repeat("1. ", n)),
    ("tag_list", lambda n: _repeat("<think>", n)),
    ("tag_list", lambda n: _repeat("```", n)),
    ("tool_calls", lambda n: _repeat("<tool_call>", n)),
    ("tool_calls", lambda n: _repeat("<function=", n)),
    ("tool_calls", lambda n: _repeat("<tool_call></tool_call>", n)),
    ("tool_calls", lambda n: _repeat("<function=a>{}</function>", n)),
    ("tool_calls", lambda n: "<function=a>" + _repeat("<parameter=b>", n) + "</function>"),
    ("citations", lambda n: _repeat("[1,", n)),
    ("citations", lambda n: "[" * n),
    ("citations", lambda n: "[" + _repeat("1 , ", n)),
    ("mentions", lambda n: _repeat("a", n)),
    ("mentions", lambda n: _repeat("a ab ", n)),
    ("session_facts", lambda n: _repeat("a/", n)),
    ("session_facts", lambda n: _repeat("x.", n) + "md"),
    ("session_facts", lambda n: _repeat("errors ", n)),
    ("image_links", lambda n: _repeat("![", n)),
    ("image_links", lambda n: _repeat("![a](", n)),
    ("image_links", lambda n: _repeat("<img", n)),
    ("image_links", lambda n: _repeat("![a](b) <img src=x> ", n)),
    ("html", lambda n: "<p>a" + " " * n + "b"),
    ("html", lambda n: "<p>" + _repeat("a \t\r\u3000", n)),
    ("html", lambda n: "<pre>" + _repeat("\n ", n)),
    ("html", lambda n: "<pre>\n" + " " * n + "x"),
    ("html", lambda n: "<pre>" + _repeat("\n\u2028x", n)),
    ("html", lambda n: _repeat("<p> \n</p>", n)),
    ("html", lambda n: _repeat("a<br>", n)),
]


@pytest.mark.parametrize(
    ("reader", "make"), CASES, ids=[f"{reader}-{i}" for i, (reader, _) in enumerate(CASES)]
)
def test_work_grows_linearly_on_adversarial_input(reader: str, make: Callable[[int], str]) -> None:
    read = READERS[reader]
    read(make(100))  # lazy imports and caches happen outside the measure
    half, full = make(N // 2), make(N)
    assert len(full) >= N - 100  # the inputs really are 100k characters
    small = measure(lambda: read(half))
    large = measure(lambda: read(full))
    assert large.patterns | small.patterns <= ALLOWED_PATTERNS, "a backtracking regex ran"
    assert large.steps <= GROWTH_MAX * small.steps + 1000, (small.steps, large.steps)
    assert large.steps <= BUDGET_PER_CHAR * len(full), large.steps


def test_the_html_sniff_still_reads_html_openings() -> None:
    assert _sniff("  <!-- a --> <!---->\n<!DOCTYPE html><p>x").value == "html"
    assert _sniff("<HEAD><title>x").value == "html"
    assert _sniff("<!-- no html -->text").value == "txt"
    assert _sniff("<htmlx>").value == "txt"
    assert _sniff("<!DOCTYPEhtml>").value == "txt"


def test_the_html_reader_keeps_its_spacing_and_blocks() -> None:
    markup = "<p>one <b>bold</b>\t\n word</p><pre>a  b\n \u2028\nc</pre>x<br> \n<br>y"
    assert html_to_blocks(markup, INGEST.html_max_depth) == ["one bold word", "a  b", "c", "x", "y"]


def _regex_line_groups(text: str) -> list[str]:
    """What the HTML reader did before: split on `\\n\\s*\\n`, strip lines, drop empty ones."""
    groups = []
    for chunk in re.split(r"\n\s*\n", text):
        block = "\n".join(line.strip() for line in chunk.split("\n") if line.strip())
        if block:
            groups.append(block)
    return groups


def test_the_scans_give_what_the_regexes_they_replace_gave() -> None:
    # Every string of up to 5 characters over letters and several kinds of whitespace.
    alphabet = ["a", " ", "\n", "\r", "\u2028"]
    for size in range(6):
        for chars in itertools.product(alphabet, repeat=size):
            text = "".join(chars)
            assert collapse_spaces(text) == re.sub(r"\s+", " ", text), repr(text)
            assert line_groups(text) == _regex_line_groups(text), repr(text)
