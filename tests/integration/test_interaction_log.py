"""The interaction log over the real API: off by default; on, each finished turn (knowledge,
agent with its tool calls, fast path) is a ChatML record, exported per base or owner as JSON
Lines by `GET /api/v1/interactions` (read capability, tenant-isolated, owner-bound keys see
their own owner only) and by `graphrag interactions export`."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.keys import create_key
from graphrag.auth.models import Capability
from graphrag.db.engine import session_scope
from graphrag.db.models import Interaction
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb
from tests.support.http_server import ThreadedServer
from tests.support.services import ROOT, worker_environment

pytestmark = pytest.mark.integration

ANSWER = "Cranes lift containers."
AGENT_ANSWER = "Nothing in the documents says so."
STEP = "This is step {n} of"
CLI_TIMEOUT_S = 120


@pytest.fixture(scope="module")
def logging_api(settings: Settings, auth_headers: dict[str, str]) -> Iterator[httpx.Client]:
    """An API of the same database with the interaction log on."""
    from api.app import create_app

    on = settings.model_copy(
        update={"chat": settings.chat.model_copy(update={"interaction_log": True})}
    )
    with (
        ThreadedServer(create_app(on)) as url,
        httpx.Client(base_url=url, timeout=60.0, headers=auth_headers) as client,
    ):
        yield client


def _key(
    settings: Settings, sessions: sessionmaker[Session], tenant: str, owner: str | None = None
) -> dict[str, str]:
    with session_scope(sessions) as session:
        created = create_key(
            session,
            settings.auth,
            tenant_id=ensure_tenant(session, tenant),
            name="interactions-test",
            capabilities=[Capability.READ],
            owner=owner,
        )
    return {"Authorization": f"Bearer {created.key}"}


def _rules(settings: Settings) -> list[dict[str, Any]]:
    where = "system" if settings.llm.system_role else "user"
    return [
        {
            "match": {where: {"contains": STEP.format(n=1)}},
            "reply": {
                "content": "",
                "tool_calls": [{"name": "knowledge_search", "arguments": {"query": "cranes"}}],
            },
        },
        {"match": {where: {"contains": STEP.format(n=2)}}, "reply": {"content": AGENT_ANSWER}},
    ]


def _chat(client: httpx.Client, mode: str, session_id: str, query: str) -> dict[str, Any]:
    body = {"query": query, "stream": False}
    response = client.post(f"/api/v1/{mode}/{session_id}", json=body)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    assert answer["completed"] is True, answer
    return answer


def _export(client: httpx.Client, **params: str) -> list[dict[str, Any]]:
    response = client.get("/api/v1/interactions", params=params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines()]


def _roles(record: dict[str, Any]) -> list[str]:
    return [m["role"] for m in record["messages"]]


def test_off_by_default(
    http: httpx.Client,
    settings: Settings,
    fresh_scripted_llm: ScriptedLlmServer,
    session_factory: sessionmaker[Session],
) -> None:
    assert settings.chat.interaction_log is False
    fresh_scripted_llm.set_rules([], default={"content": ANSWER})
    kb = create_kb(http)
    session = http.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()
    _chat(http, "knowledge-chat", session["id"], "What do cranes lift?")
    with session_factory() as db:
        count = db.scalar(
            select(func.count())
            .select_from(Interaction)
            .where(Interaction.session_id == uuid.UUID(session["id"]))
        )
    assert count == 0
    assert _export(http, kb_id=kb["id"]) == []


def test_turns_are_logged_and_exported_per_base_and_owner(
    logging_api: httpx.Client,
    settings: Settings,
    settings_env: dict[str, str],
    fresh_scripted_llm: ScriptedLlmServer,
    session_factory: sessionmaker[Session],
) -> None:
    fresh_scripted_llm.set_rules(_rules(settings), default={"content": ANSWER})
    kb, other_kb = create_kb(logging_api), create_kb(logging_api)
    owner, other_owner = f"owner-{uuid.uuid4().hex[:8]}", f"owner-{uuid.uuid4().hex[:8]}"
    session = logging_api.post("/api/v1/sessions", json={"kb_ids": [kb["id"]], "owner": owner})
    sid = session.json()["id"]
    # The agent first: the scripted model finds its step in the first user turn.
    _chat(logging_api, "agent-chat", sid, "Who repairs the cranes?")
    _chat(logging_api, "knowledge-chat", sid, "What do cranes lift?")
    _chat(logging_api, "knowledge-chat", sid, "Thanks!")
    other = logging_api.post(
        "/api/v1/sessions", json={"kb_ids": [other_kb["id"]], "owner": other_owner}
    ).json()
    _chat(logging_api, "knowledge-chat", other["id"], "What do ships carry?")

    agent, knowledge, thanks = _export(logging_api, kb_id=kb["id"])
    # The agent's record: the question, its tool call and the result, the answer.
    assert _roles(agent) == ["system", "user", "assistant", "tool", "assistant"]
    call = agent["messages"][2]["tool_calls"][0]
    assert call["function"]["name"] == "knowledge_search"
    assert agent["messages"][3]["tool_call_id"] == call["id"]
    assert agent["messages"][-1]["content"] == AGENT_ANSWER
    # The knowledge turn's: the system text, the earlier turn, the question as sent, the answer.
    assert _roles(knowledge) == ["system", "user", "assistant", "user", "assistant"]
    assert "Question: What do cranes lift?" in knowledge["messages"][-2]["content"]
    assert knowledge["messages"][-1]["content"] == ANSWER
    assert _roles(thanks) == ["user", "assistant"]  # the fast path sent the model nothing

    by_owner = _export(logging_api, owner=other_owner)
    assert len(by_owner) == 1
    assert "What do ships carry?" in json.dumps(by_owner[0])
    assert _export(logging_api, kb_id=kb["id"], owner=other_owner) == []

    # Another tenant does not see the base; a key bound to an owner reads only its own.
    stranger = _key(settings, session_factory, f"tenant-{uuid.uuid4().hex[:8]}")
    response = logging_api.get("/api/v1/interactions", params={"kb_id": kb["id"]}, headers=stranger)
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    assert _export(logging_api, owner=owner) != []
    bound = _key(settings, session_factory, settings.api.default_tenant, owner=other_owner)
    forbidden = logging_api.get("/api/v1/interactions", params={"owner": owner}, headers=bound)
    assert forbidden.status_code == 403
    assert forbidden.json()["error"]["code"] == "owner_forbidden"
    mine = logging_api.get("/api/v1/interactions", params={"kb_id": kb["id"]}, headers=bound)
    assert mine.status_code == 200 and mine.text == ""  # the base's turns are another owner's
    missing = logging_api.get("/api/v1/interactions")
    assert missing.status_code == 422  # an admin key must say which base or owner

    cli = subprocess.run(
        [sys.executable, "-m", "cli.main", "interactions", "export", "--kb", kb["id"]],
        cwd=ROOT,
        env=worker_environment(settings_env),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert cli.returncode == 0, cli.stderr
    assert [json.loads(line) for line in cli.stdout.splitlines()] == [agent, knowledge, thanks]
