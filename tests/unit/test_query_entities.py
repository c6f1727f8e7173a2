"""Entity names read from what a model answers to the `extract_entity` prompt."""

from __future__ import annotations

import pytest

from graphrag.chat.query_entities import parse_entity_list

pytestmark = pytest.mark.unit

CASES = [
    ('["Ada Moreau", "Northwind Robotics"]', ["Ada Moreau", "Northwind Robotics"]),
    ('```json\n["Sorter X2"]\n```', ["Sorter X2"]),
    ('Sure! ["Lyon", "Lyon", "  Rotterdam "]', ["Lyon", "Rotterdam"]),
    ('["Harbor Logistics", "Jonas Ver', ["Harbor Logistics", "Jonas Ver"]),
    ("[]", []),
    ("I could not find any entity.", []),
    ('{"entities": "none"}', []),
    ('[1, null, "", "Antwerp", ["nested"]]', ["Antwerp"]),
    ('["' + "x" * 500 + '", "Short"]', ["Short"]),
]


@pytest.mark.parametrize(("answer", "names"), CASES)
def test_parse_entity_list(answer: str, names: list[str]) -> None:
    assert parse_entity_list(answer, max_name_chars=200) == names
