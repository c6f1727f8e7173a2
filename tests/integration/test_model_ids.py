"""Model ids (`kb/<name>`, ids, several joined by `+`) on real PostgreSQL: resolved in one
query whatever the number of parts, refused before any query when too long or of too many
parts, as a 400 under /v1 and a tool error over MCP."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, event
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.errors import InvalidInputError, UnknownModelError
from graphrag.faces.model_ids import resolve_kb, resolve_model
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant
from tests.support.api_helpers import create_kb

pytestmark = pytest.mark.integration

COMPLETIONS = "/v1/chat/completions"
QUESTION = [{"role": "user", "content": "Anything?"}]


@contextmanager
def _recording(engine: Engine, seen: list[str]) -> Iterator[None]:
    """Append each SQL statement run on `engine` inside the block to `seen`."""

    def record(*args: Any) -> None:
        seen.append(str(args[2]))

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield
    finally:
        event.remove(engine, "before_cursor_execute", record)


@pytest.fixture(scope="module")
def bases(http_module: httpx.Client) -> dict[str, dict[str, Any]]:
    """Three bases of the default tenant, one whose name holds the separator."""
    tag = uuid.uuid4().hex[:8]
    return {
        "a": create_kb(http_module, name=f"a-{tag}"),
        "b": create_kb(http_module, name=f"b-{tag}"),
        "plus": create_kb(http_module, name=f"a-{tag}+b-{tag}"),
    }


class Resolver:
    """`resolver(model, bare=False)`: the bases found; `statements`: the SQL that call ran."""

    def __init__(self, engine: Engine, sessions: sessionmaker[Session], settings: Settings) -> None:
        self.engine, self.sessions, self.settings = engine, sessions, settings
        self.statements: list[str] = []

    def __call__(self, model: str, bare: bool = False) -> list[uuid.UUID]:
        self.statements.clear()
        with session_scope(self.sessions) as session:
            tenant = ensure_tenant(session, self.settings.api.default_tenant)
            with _recording(self.engine, self.statements):
                return resolve_model(session, self.settings, tenant, model, bare=bare)


@pytest.fixture()
def resolve(engine: Engine, session_factory: sessionmaker[Session], settings: Settings) -> Resolver:
    return Resolver(engine, session_factory, settings)


def _id(base: dict[str, Any]) -> uuid.UUID:
    return uuid.UUID(base["id"])


def test_several_parts_are_resolved_in_one_query(
    resolve: Resolver, bases: dict[str, dict[str, Any]]
) -> None:
    a, b = bases["a"], bases["b"]
    model = f"kb/{b['name']} + {a['id']}+kb/{a['name']}"
    assert resolve(model) == [_id(b), _id(a)]  # in the id's order, each base once
    assert len(resolve.statements) == 1, resolve.statements


def test_a_name_holding_the_separator_is_found_whole(
    resolve: Resolver, bases: dict[str, dict[str, Any]]
) -> None:
    assert resolve(f"kb/{bases['plus']['name']}") == [_id(bases["plus"])]
    assert len(resolve.statements) == 1, resolve.statements
    # As a plain name (the MCP tools' `kb`), too.
    assert resolve(bases["plus"]["name"], bare=True) == [_id(bases["plus"])]


def test_one_unknown_part_fails_the_whole_id(
    resolve: Resolver, bases: dict[str, dict[str, Any]]
) -> None:
    with pytest.raises(UnknownModelError):
        resolve(f"kb/{bases['a']['name']}+kb/no-such-base-{uuid.uuid4().hex}")
    with pytest.raises(UnknownModelError):
        resolve(bases["a"]["name"])  # a plain name is no model id


def test_too_many_parts_or_too_long_are_refused_before_any_query(
    resolve: Resolver, settings: Settings, bases: dict[str, dict[str, Any]]
) -> None:
    parts = settings.chat.max_kbs + 1
    too_long = "kb/" + "x" * settings.faces.max_model_id_chars
    for model in ("+".join([f"kb/{bases['a']['name']}"] * parts), "kb/+" * 5000, too_long):
        with pytest.raises(InvalidInputError) as refused:
            resolve(model)
        assert refused.value.details["param"] == "model"
        assert resolve.statements == []
    # At the limit, the parts are resolved.
    assert resolve("+".join([bases["a"]["id"]] * settings.chat.max_kbs)) == [_id(bases["a"])]
    assert len(resolve.statements) == 1


def test_resolve_kb_takes_a_name_a_model_id_or_an_id(
    session_factory: sessionmaker[Session], settings: Settings, bases: dict[str, dict[str, Any]]
) -> None:
    base = bases["a"]
    with session_scope(session_factory) as session:
        tenant = ensure_tenant(session, settings.api.default_tenant)
        for term in (base["name"], f"kb/{base['name']}", base["id"], f" {base['id']} "):
            assert resolve_kb(session, tenant, term) == _id(base)


def test_openai_face_answers_400_for_too_many_parts(
    http: httpx.Client, settings: Settings, bases: dict[str, dict[str, Any]]
) -> None:
    model = "+".join([f"kb/{bases['a']['name']}"] * (settings.chat.max_kbs + 1))
    for body in ({"model": model}, {"model": "x" * (settings.faces.max_model_id_chars + 1)}):
        response = http.post(COMPLETIONS, json={**body, "messages": QUESTION})
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == "invalid_input" and error["param"] == "model"
        assert error["type"] == "invalid_request_error"
    assert http.get("/health").status_code == 200


def test_mcp_ask_refuses_too_many_parts(
    http: httpx.Client, settings: Settings, bases: dict[str, dict[str, Any]]
) -> None:
    kb = "+".join([f"kb/{bases['a']['name']}"] * (settings.chat.max_kbs + 1))
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "ask", "arguments": {"kb": kb, "question": "Anything?"}},
    }
    headers = {"Accept": "application/json, text/event-stream"}
    response = http.post("/mcp", json=call, headers=headers)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["isError"] is True
    assert "invalid_input:" in result["content"][0]["text"]
    assert http.get("/v1/models").status_code == 200  # the API goes on answering
