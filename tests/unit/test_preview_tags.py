"""The tolerant reading of suggested relation labels (`parse_tag_list`)."""

from __future__ import annotations

import pytest

from graphrag.extraction.previews import parse_tag_list

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('["works for", " Works  FOR ", "located in"]', ["works for", "located in"]),
        ('[{"type": "supplies"}, {"label": "owns"}, {"x": 1}, 3]', ["supplies", "owns"]),
        ('{"tags": ["signed"]}', ["signed"]),
        ("</think>works for, located in, supplies.", ["works for", "located in", "supplies"]),
        ("1. works for\n2) located in\n* owns", ["works for", "located in", "owns"]),
        ('"works for"', []),
        ("", []),
        (None, []),
    ],
)
def test_labels_are_read_from_many_shapes(reply: str | None, expected: list[str]) -> None:
    assert parse_tag_list(reply, max_tags=20, max_chars=50) == expected


def test_caps_apply() -> None:
    reply = '["a", "bb", "' + "c" * 60 + '", "d", "e"]'
    assert parse_tag_list(reply, max_tags=3, max_chars=50) == ["a", "bb", "d"]
