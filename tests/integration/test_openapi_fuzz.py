"""Schemathesis against the live app: every operation of the OpenAPI schema, called with
generated valid and invalid input under an admin key, never answers with a server error.

The schema is the app's own (built at collection, no services needed); the calls go to the
session's real server over HTTP. Phases: the schema's examples, the coverage phase (boundary
values, missing and malformed parts, unexpected methods) and a few random examples per
operation. About 1,800 requests; well under a minute on 2 cores.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import Case
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig

from api.app import create_app
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb

pytestmark = pytest.mark.integration

EXAMPLES_PER_OPERATION = 5
PHASES = {name: {"enabled": True} for name in ("examples", "coverage", "fuzzing")}

schema = schemathesis.openapi.from_dict(
    create_app(Settings()).openapi(), config=SchemathesisConfig.from_dict({"phases": PHASES})
)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
def test_no_operation_answers_with_a_server_error(
    case: Case[Any],
    api_url: str,
    auth_headers: dict[str, str],
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    case.call_and_validate(base_url=api_url, headers=auth_headers, checks=[not_a_server_error])


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/v1/knowledge-bases", '{"name": "a\\u0000b"}'),
        ("POST", "/api/v1/sessions", '{"title": "a\\u0000b"}'),
        ("POST", "/api/v1/knowledge-bases", '{"name": "a\\ud800b"}'),
    ],
    ids=["kb-name-nul", "session-title-nul", "kb-name-lone-surrogate"],
)
def test_unstorable_characters_are_422(
    http: httpx.Client, method: str, path: str, body: str
) -> None:
    headers = {"content-type": "application/json"}
    response = http.request(method, path, content=body.encode(), headers=headers)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_input"
    assert http.get("/health").status_code == 200  # the connection survived


# A lone surrogate in graph-search `relation_types` used to answer 500: as JSON escapes (high,
# low, a reversed pair, half a pair) and as CESU-8 bytes of a surrogate.
RELATION_TYPE_ITEMS = {
    "lone-high": b'"\\ud800"',
    "lone-low": b'"\\udfff"',
    "reversed-pair": b'"\\ude00\\ud83d"',
    "half-pair": b'"works\\ud83d"',
    "cesu-8-bytes": b'"\xed\xa0\x80"',
}


@pytest.mark.parametrize("item", RELATION_TYPE_ITEMS.values(), ids=RELATION_TYPE_ITEMS.keys())
def test_lone_surrogates_in_graph_search_relation_types_are_422(
    http: httpx.Client, item: bytes
) -> None:
    kb = create_kb(http)
    body = b'{"entity": "a", "relation_types": [' + item + b"]}"
    headers = {"content-type": "application/json"}
    path = f"/api/v1/knowledge-bases/{kb['id']}/graph-search"
    response = http.post(path, content=body, headers=headers)
    assert response.status_code == 422, response.text
    errors = response.json()["error"]["details"]["errors"]
    assert [e["loc"] for e in errors] == [["body", "relation_types", 0]]


@pytest.mark.parametrize("mode", ["knowledge-chat", "agent-chat"])
def test_a_question_holding_nul_is_422_before_any_stream(http: httpx.Client, mode: str) -> None:
    session = http.post("/api/v1/sessions", json={"title": "nul"}).json()
    body = b'{"query": "what is \\u0000 this?"}'
    headers = {"content-type": "application/json"}
    response = http.post(f"/api/v1/{mode}/{session['id']}", content=body, headers=headers)
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["error"]["code"] == "invalid_input"


def test_nul_in_a_text_import_is_422_not_415(http: httpx.Client) -> None:
    kb = create_kb(http)
    body = b'{"title": "t", "content": "a\\u0000b"}'
    headers = {"content-type": "application/json"}
    response = http.post(
        f"/api/v1/knowledge-bases/{kb['id']}/knowledge/text", content=body, headers=headers
    )
    assert response.status_code == 422, response.text
    errors = response.json()["error"]["details"]["errors"]
    assert [e["loc"] for e in errors] == [["body", "content"]]
