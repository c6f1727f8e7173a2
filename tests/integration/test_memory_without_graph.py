"""The agent memory with Neo4j off: core memory and the recall log (PostgreSQL) keep working,
the chat still reads and feeds them, and only the archival routes answer 503."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.models import Message, RecallMemory
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb
from tests.support.http_server import ThreadedServer

pytestmark = pytest.mark.integration

BASE = "/api/v1/memory"
CORE_TEXT = "The user is a harbour engineer in Quillon."
ANSWER = "Cranes lift containers."
ARCHIVAL_OFF = "archival_memory_disabled"


@pytest.fixture(scope="module")
def graphless(settings: Settings, auth_headers: dict[str, str]) -> Iterator[httpx.Client]:
    """An API of the same database with NEO4J_ENABLE off."""
    from api.app import create_app

    off = settings.model_copy(update={"neo4j": settings.neo4j.model_copy(update={"enable": False})})
    with (
        ThreadedServer(create_app(off)) as url,
        httpx.Client(base_url=url, timeout=60.0, headers=auth_headers) as client,
    ):
        yield client


def _archival_off(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    error = response.json()["error"]
    assert error["code"] == ARCHIVAL_OFF and "Neo4j" in error["message"]


def test_core_memory_works_and_archival_routes_say_why_not(graphless: httpx.Client) -> None:
    who = {"owner": f"owner-{uuid.uuid4().hex[:8]}"}
    written = graphless.put(f"{BASE}/core/profile", json={**who, "text": CORE_TEXT})
    assert written.status_code == 200, written.text
    core = graphless.get(f"{BASE}/core", params=who).json()
    assert [(s["section"], s["text"]) for s in core["sections"]] == [("profile", CORE_TEXT)]

    _archival_off(graphless.get(f"{BASE}/facts", params=who))
    _archival_off(graphless.post(f"{BASE}/facts", json={**who, "text": "A fact."}))
    _archival_off(graphless.post(f"{BASE}/facts/search", json={**who, "query": "fact"}))
    _archival_off(graphless.get(f"{BASE}/entities/Quillon", params=who))
    memory = graphless.get("/api/v1/system").json()["memory"]
    assert memory == {"core": "enabled", "recall": "enabled", "archival": "disabled"}

    assert graphless.delete(f"{BASE}/core/profile", params=who).status_code == 204
    assert graphless.get(f"{BASE}/core", params=who).json()["sections"] == []


def test_system_reports_the_graph_engine_not_enabled(graphless: httpx.Client) -> None:
    body = graphless.get("/api/v1/system").json()
    assert body["graph_database_engine"] == "Not Enabled"


def test_chat_reads_core_memory_and_logs_the_turn(
    graphless: httpx.Client,
    fresh_scripted_llm: ScriptedLlmServer,
    session_factory: sessionmaker[Session],
) -> None:
    fresh_scripted_llm.set_rules(
        [{"match": {"user": {"contains": "Question"}}, "reply": {"content": ANSWER}}],
        default={"content": ANSWER},
    )
    owner = f"owner-{uuid.uuid4().hex[:8]}"
    assert (
        graphless.put(f"{BASE}/core/profile", json={"owner": owner, "text": CORE_TEXT}).status_code
        == 200
    )
    kb = create_kb(graphless)
    session = graphless.post("/api/v1/sessions", json={"kb_ids": [kb["id"]], "owner": owner})
    assert session.status_code == 201, session.text
    session_id = session.json()["id"]

    question = {"query": "What do cranes lift?", "stream": False}
    reply = graphless.post(f"/api/v1/knowledge-chat/{session_id}", json=question)
    assert reply.status_code == 200, reply.text
    assert reply.json()["completed"] is True
    prompts = [json.dumps(r.body) for r in fresh_scripted_llm.requests("/v1/chat/completions")]
    assert any(CORE_TEXT in p for p in prompts), prompts  # core memory in the system prompt

    with session_factory() as db:
        logged = db.execute(
            select(RecallMemory.role, RecallMemory.content).where(RecallMemory.owner == owner)
        ).all()
    assert sorted((str(role.value), content) for role, content in logged) == [
        ("assistant", ANSWER),
        ("user", "What do cranes lift?"),
    ]

    close = graphless.post(f"{BASE}/sessions/{session_id}/close", json={"owner": owner})
    _archival_off(close)


def test_deleting_a_session_clears_its_messages_and_recall_log(
    graphless: httpx.Client,
    fresh_scripted_llm: ScriptedLlmServer,
    session_factory: sessionmaker[Session],
) -> None:
    fresh_scripted_llm.set_rules([], default={"content": ANSWER})
    kb = create_kb(graphless)
    session = graphless.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]})
    assert session.status_code == 201, session.text
    session_id = session.json()["id"]
    question = {"query": "What do cranes lift?", "stream": False}
    assert graphless.post(f"/api/v1/knowledge-chat/{session_id}", json=question).json()["completed"]

    def stored() -> tuple[int, int]:
        with session_factory() as db:
            messages = db.scalars(select(Message.id).where(Message.session_id == session_id))
            logged = db.scalars(
                select(RecallMemory.id).where(RecallMemory.session_id == session_id)
            )
            return len(messages.all()), len(logged.all())

    assert stored() == (2, 2)
    deleted = graphless.delete(f"/api/v1/sessions/{session_id}")
    assert deleted.status_code == 204, deleted.text  # no archival fact to forget without Neo4j
    assert stored() == (0, 0)
    assert graphless.get(f"/api/v1/sessions/{session_id}").status_code == 404
