"""Neo4j labels from ids: only real UUIDs become labels, written from the parsed value."""

from __future__ import annotations

import re
from uuid import UUID

import pytest

from graphrag.graph.labels import entity_label

pytestmark = pytest.mark.unit

KB = "0b6c1c52-8f3e-4c3a-9d1e-2f4a5b6c7d8e"
DOC = "7f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"
KB_LABEL = "ENTITY0b6c1c52_8f3e_4c3a_9d1e_2f4a5b6c7d8e"
SAFE_LABEL = re.compile(r"ENTITY[0-9a-f]{8}(_[0-9a-f]{4}){3}_[0-9a-f]{12}")


@pytest.mark.parametrize(
    "raw",
    [
        KB,
        KB.upper(),
        UUID(KB),
        "{" + KB + "}",  # braced form: accepted, the label is canonical
        "urn:uuid:" + KB,
        KB.replace("-", ""),
    ],
)
def test_equivalent_spellings_give_the_canonical_label(raw: str | UUID) -> None:
    assert entity_label(raw) == KB_LABEL


@pytest.mark.parametrize(
    "raw",
    [
        "x`) DETACH DELETE n //",
        KB + "`) DETACH DELETE n //",
        KB + " OR 1=1",
        "",
        " ",
        "not-a-uuid",
        KB[:-1],
        KB + "0",
        "ENTITY" + KB,
        KB.replace("-", "_"),
        "12345",
    ],
)
def test_anything_else_is_refused(raw: str) -> None:
    with pytest.raises(ValueError):
        entity_label(raw)


def test_labels_only_ever_hold_safe_characters() -> None:
    assert SAFE_LABEL.fullmatch(entity_label(UUID(int=0)))
    assert SAFE_LABEL.fullmatch(entity_label(DOC))
