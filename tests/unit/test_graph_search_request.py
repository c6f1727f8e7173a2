"""Graph-search request checks against the settings' caps, and the disabled store's answers."""

from __future__ import annotations

import uuid

import pytest
from pydantic import ValidationError

from graphrag.errors import InvalidInputError
from graphrag.graph.search_models import GraphSearchRequest
from graphrag.graph.store import DisabledGraphStore
from graphrag.search.graph_search import check_request
from graphrag.settings import GraphSearchSettings

pytestmark = pytest.mark.unit

LIMITS = GraphSearchSettings(
    max_entity_chars=10,
    default_limit=5,
    max_limit=8,
    candidate_cap=100,
    max_relations=50,
    max_relation_types=2,
    max_knowledge_ids=2,
    max_name_chars=20,
    max_attributes=3,
    max_attribute_chars=30,
    max_chunks_per_item=4,
    max_sources=10,
    excerpt_chars=40,
    match_timeout_s=1.0,
)


def test_default_and_explicit_limit() -> None:
    assert check_request(GraphSearchRequest(entity="Ada"), LIMITS) == 5
    assert check_request(GraphSearchRequest(entity="Ada", limit=8), LIMITS) == 8


@pytest.mark.parametrize(
    "fields",
    [
        {"entity": "  "},
        {"entity": "x" * 11},
        {"entity": "Ada", "limit": 9},
        {"entity": "Ada", "relation_types": ["A", "B", "C"]},
        {"entity": "Ada", "relation_types": [" "]},
        {"entity": "Ada", "relation_types": ["R" * 11]},
        {"entity": "Ada", "knowledge_ids": [uuid.uuid4() for _ in range(3)]},
    ],
)
def test_requests_over_a_cap_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        check_request(GraphSearchRequest.model_validate(fields), LIMITS)


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"entity": ""},
        {"entity": "Ada", "limit": 0},
        {"entity": "Ada", "relation_types": []},
        {"entity": "Ada", "knowledge_ids": []},
        {"entity": "Ada", "query": "MATCH (n) RETURN n"},
    ],
)
def test_malformed_requests_do_not_parse(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        GraphSearchRequest.model_validate(fields)


def test_injection_text_is_an_ordinary_substring() -> None:
    request = GraphSearchRequest(entity="`) DELETE", relation_types=["x' OR 1=1"])
    assert check_request(request, LIMITS) == 5


def test_disabled_store_finds_nothing() -> None:
    store = DisabledGraphStore()
    kb = uuid.uuid4()

    assert not store.enabled
    assert store.match_entities(kb, "Ada", None, 10, 1.0).entities == []
    assert store.entity_relations(kb, ["4:x:1"], None, 10).relations == []
