"""Reading the question split's answer: only distinct, bounded sub-questions come through."""

from __future__ import annotations

import pytest

from graphrag.chat.decompose import parse_sub_questions

pytestmark = pytest.mark.unit

MAX_Q = 3
MAX_CHARS = 40


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"questions": ["Who makes X?", "Who founded it?"]}', ["Who makes X?", "Who founded it?"]),
        ('Sure: {"questions": ["A?", " A? ", "", 7, "B?"]}', ["A?", "B?"]),  # text around, repeats
        ('{"questions": ["A?", "B?"', ["A?", "B?"]),  # cut short: repaired
        ('{"questions": ["1?", "2?", "3?", "4?"]}', ["1?", "2?", "3?"]),  # at most MAX_Q
        ('{"questions": ["' + "x" * (MAX_CHARS + 1) + '", "ok?"]}', ["ok?"]),  # too long
        ('["A?", "B?"]', []),  # not the asked shape
        ('{"questions": "A?"}', []),
        ("no JSON at all", []),
    ],
)
def test_parse_sub_questions(answer: str, expected: list[str]) -> None:
    assert parse_sub_questions(answer, MAX_Q, MAX_CHARS) == expected
