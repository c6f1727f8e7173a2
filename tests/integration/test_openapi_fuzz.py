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
