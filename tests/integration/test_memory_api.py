"""The memory REST API over real HTTP, and the session close through a real Celery worker."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest
from celery import Celery
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import OutboxStatus
from graphrag.db.models import OutboxTask, RecallMemory
from graphrag.db.outbox import TaskName
from graphrag.memory.clock import system_clock
from graphrag.memory.recall_log import CLOSE_EVENT, record_exchange
from graphrag.memory.records import MemoryOwner
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.memory_helpers import ManualClock, new_chat_session
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration

BASE = "/api/v1/memory"
CLOSE_WAIT_S = 120.0
POLL_S = 0.25


def test_facts_add_dedup_list_get_search_delete(http: httpx.Client, owner: MemoryOwner) -> None:
    who = {"owner": owner.owner}
    created = http.post(f"{BASE}/facts", json={**who, "text": "The user's cat is named Miso."})
    assert created.status_code == 201, created.text
    fact = created.json()
    assert fact["kind"] == "note" and fact["access_count"] == 0

    twin = http.post(f"{BASE}/facts", json={**who, "text": "The user's cat is named Miso"})
    assert twin.status_code == 409
    assert twin.json()["error"]["details"]["duplicate_of"] == fact["id"]

    page = http.get(f"{BASE}/facts", params=who).json()
    assert page["total"] == 1 and [f["id"] for f in page["items"]] == [fact["id"]]
    assert (
        http.get(f"{BASE}/facts/{fact['id']}", params={"owner": "someone-else"}).status_code == 404
    )

    hits = http.post(f"{BASE}/facts/search", json={**who, "query": "what is the cat called"})
    assert hits.status_code == 200
    assert [h["fact"]["id"] for h in hits.json()] == [fact["id"]]
    assert set(hits.json()[0]) >= {"similarity", "recency", "frequency", "score"}
    again = http.get(f"{BASE}/facts/{fact['id']}", params=who).json()
    assert again["access_count"] == 0  # searching is read-only

    assert http.delete(f"{BASE}/facts/{fact['id']}", params=who).status_code == 204
    assert http.get(f"{BASE}/facts/{fact['id']}", params=who).status_code == 404
    assert http.delete(f"{BASE}/facts/{fact['id']}", params=who).status_code == 404


def test_bad_input_is_refused(http: httpx.Client, owner: MemoryOwner) -> None:
    who = {"owner": owner.owner}
    assert http.post(f"{BASE}/facts", json={**who, "text": "   "}).status_code == 422
    assert http.post(f"{BASE}/facts", json={**who, "text": "x", "importance": 2}).status_code == 422
    long_owner = {"owner": "o" * 201, "text": "fine"}
    assert http.post(f"{BASE}/facts", json=long_owner).status_code == 422
    search = http.post(f"{BASE}/facts/search", json={**who, "query": "x", "k": 10_000})
    assert search.status_code == 422
    assert http.get(f"{BASE}/core", params={"owner": "a\x00b"}).status_code == 422
    assert http.put(f"{BASE}/core/notes", json={**who, "text": "a\x00b"}).status_code == 422
    bad = http.put(f"{BASE}/core/Bad-Name", json={**who, "text": "x"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_input"


def test_core_memory_read_edit_delete(http: httpx.Client, owner: MemoryOwner) -> None:
    who = {"owner": owner.owner}
    assert http.get(f"{BASE}/core", params=who).json()["sections"] == []
    for section, text in (
        ("notes", "Likes tables."),
        ("rules", "Answer briefly."),
        ("identity", "Ada, an engineer."),
    ):
        put = http.put(f"{BASE}/core/{section}", json={**who, "text": text})
        assert put.status_code == 200 and put.json()["text"] == text
    http.put(f"{BASE}/core/rules", json={**who, "text": "Answer in French."})
    sections = http.get(f"{BASE}/core", params=who).json()["sections"]
    assert [(s["section"], s["text"]) for s in sections] == [
        ("identity", "Ada, an engineer."),
        ("rules", "Answer in French."),
        ("notes", "Likes tables."),
    ]
    assert http.delete(f"{BASE}/core/rules", params=who).status_code == 204
    assert http.delete(f"{BASE}/core/rules", params=who).status_code == 404
    assert len(http.get(f"{BASE}/core", params=who).json()["sections"]) == 2


def _wait_report(http: httpx.Client, session_id: uuid.UUID, owner: str) -> dict[str, Any]:
    deadline = time.monotonic() + CLOSE_WAIT_S
    while True:
        answer = http.get(f"{BASE}/sessions/{session_id}/close-report", params={"owner": owner})
        if answer.status_code == 200:
            report: dict[str, Any] = answer.json()
            return report
        assert answer.status_code == 404, answer.text
        if time.monotonic() > deadline:
            raise AssertionError(f"session {session_id} not closed after {CLOSE_WAIT_S}s")
        time.sleep(POLL_S)


def test_close_session_through_the_worker_then_entity_neighbourhood(
    http: httpx.Client,
    owner: MemoryOwner,
    session_factory: sessionmaker[Session],
    fresh_scripted_llm: ScriptedLlmServer,
    worker: WorkerProcess,
) -> None:
    graph = {
        "nodes": [
            {"name": "Helios", "attributes": ["a solar telemetry service"]},
            {"name": "Kafka"},
        ],
        "relations": [{"node1": "Helios", "node2": "Kafka", "type": "publishes to"}],
    }
    fresh_scripted_llm.set_rules(
        [{"match": {"user": {"contains": "Helios"}}, "reply": {"content": graph}}]
    )
    session_id = new_chat_session(session_factory, owner)
    with session_scope(session_factory) as db:
        record_exchange(
            db,
            owner,
            session_id,
            "Where does Helios send its readings?",
            "Helios publishes every reading to Kafka.",
            ["Helios"],
        )
    who = {"owner": owner.owner}
    assert http.get(f"{BASE}/sessions/{session_id}/close-report", params=who).status_code == 404
    queued = http.post(f"{BASE}/sessions/{session_id}/close", json=who)
    assert queued.status_code == 202 and queued.json()["queued"] is True
    report = _wait_report(http, session_id, owner.owner)
    assert report["llm_status"] == "ok" and report["stored"] >= 3 and report["relations"] == 1
    with session_scope(session_factory) as db:
        logged = db.scalars(
            select(RecallMemory.tool_data).where(
                RecallMemory.session_id == session_id,
                RecallMemory.tool_data["event"].astext == CLOSE_EVENT,
            )
        ).one()
    assert report == logged["report"]  # the API answers the JSON the close stored

    hood = http.get(f"{BASE}/entities/helios", params=who)
    assert hood.status_code == 200, hood.text
    body = hood.json()
    assert body["name"] == "Helios" and body["description"] == "a solar telemetry service"
    assert [(r["type"], r["other"], r["direction"], r["weight"]) for r in body["relations"]] == [
        ("publishes to", "Kafka", "out", 1)
    ]
    assert body["facts"] and all("Helios" in f["text"] for f in body["facts"])
    assert http.get(f"{BASE}/entities/Nobody", params=who).status_code == 404


def test_idle_sweep_task_closes_a_forgotten_session(
    http: httpx.Client,
    owner: MemoryOwner,
    settings: Settings,
    session_factory: sessionmaker[Session],
    celery_app: Celery,
    worker: WorkerProcess,
) -> None:
    idle_ms = settings.memory.idle_close_s * 1000
    long_ago = ManualClock(system_clock() - 2 * idle_ms)
    session_id = new_chat_session(session_factory, owner)
    with session_scope(session_factory) as db:
        record_exchange(
            db,
            owner,
            session_id,
            "Which port does the staging proxy listen on?",
            "The staging proxy listens on port 8443.",
            [],
            clock=long_ago,
        )
    celery_app.send_task("memory.close_idle_sessions")
    report = _wait_report(http, session_id, owner.owner)
    assert report["messages"] == 2 and report["stored"] >= 1


def _recall_rows(sessions: sessionmaker[Session], owner: MemoryOwner, text: str) -> int:
    with session_scope(sessions) as db:
        return (
            db.scalar(
                select(func.count())
                .select_from(RecallMemory)
                .where(
                    RecallMemory.tenant_id == owner.tenant_id, RecallMemory.content.contains(text)
                )
            )
            or 0
        )


def test_deleting_a_session_forgets_its_transcript(
    http: httpx.Client,
    owner: MemoryOwner,
    session_factory: sessionmaker[Session],
    fresh_scripted_llm: ScriptedLlmServer,
    worker: WorkerProcess,
) -> None:
    fresh_scripted_llm.set_rules(
        [{"match": {}, "reply": {"content": {"nodes": [], "relations": []}}}]
    )
    who = {"owner": owner.owner}
    topics = {"doomed": "the Zephyrine vault code", "kept": "the Quillmoor ferry timetable"}
    ids = {}
    for name, topic in topics.items():
        ids[name] = new_chat_session(session_factory, owner)
        with session_scope(session_factory) as db:
            record_exchange(
                db,
                owner,
                ids[name],
                f"What is {topic}?",
                f"{topic}: 4471.",
                [],
            )
        assert http.post(f"{BASE}/sessions/{ids[name]}/close", json=who).status_code == 202
        assert _wait_report(http, ids[name], owner.owner)["stored"] >= 1

    def recalled(topic: str) -> list[dict[str, Any]]:
        hits = http.post(f"{BASE}/facts/search", json={**who, "query": f"What is {topic}?"})
        assert hits.status_code == 200, hits.text
        return [h["fact"] for h in hits.json() if topic in h["fact"]["text"]]

    assert recalled(topics["doomed"]) and recalled(topics["kept"])
    assert _recall_rows(session_factory, owner, topics["doomed"]) == 2

    assert http.delete(f"/api/v1/sessions/{ids['doomed']}").status_code == 204
    assert http.get(f"/api/v1/sessions/{ids['doomed']}").status_code == 404
    assert recalled(topics["doomed"]) == []
    assert _recall_rows(session_factory, owner, topics["doomed"]) == 0
    listed = http.get(f"{BASE}/facts", params={**who, "page_size": 100}).json()["items"]
    assert not [f for f in listed if f["session_id"] == str(ids["doomed"])]
    # The owner's other session keeps what it taught.
    assert [f["session_id"] for f in recalled(topics["kept"])] == [str(ids["kept"])]
    assert _recall_rows(session_factory, owner, topics["kept"]) == 2


def test_a_session_deleted_during_its_close_keeps_nothing(
    http: httpx.Client,
    owner: MemoryOwner,
    session_factory: sessionmaker[Session],
    fresh_scripted_llm: ScriptedLlmServer,
    worker: WorkerProcess,
) -> None:
    """The close extracts while the session is deleted: the facts it writes afterwards go."""
    empty: dict[str, list[str]] = {"nodes": [], "relations": []}
    fresh_scripted_llm.set_rules(
        [{"match": {}, "reply": {"content": empty}, "fault": {"delay_s": 3.0}}]
    )
    fresh_scripted_llm.clear_requests()
    session_id = new_chat_session(session_factory, owner)
    topic = "the Brambleholt lighthouse keeper"
    with session_scope(session_factory) as db:
        record_exchange(db, owner, session_id, f"Who is {topic}?", f"{topic}: Ines.", [])
    who = {"owner": owner.owner}
    assert http.post(f"{BASE}/sessions/{session_id}/close", json=who).status_code == 202
    deadline = time.monotonic() + CLOSE_WAIT_S
    while not fresh_scripted_llm.requests("/v1/chat/completions"):  # the close is extracting
        assert time.monotonic() < deadline, "the close never asked the LLM"
        time.sleep(POLL_S)
    assert http.delete(f"/api/v1/sessions/{session_id}").status_code == 204
    while _close_pending(session_factory, session_id):
        assert time.monotonic() < deadline, "the close task never ended"
        time.sleep(POLL_S)
    listed = http.get(f"{BASE}/facts", params={**who, "page_size": 100}).json()["items"]
    assert [f for f in listed if f["session_id"] == str(session_id)] == []
    assert _recall_rows(session_factory, owner, topic) == 0


def _close_pending(sessions: sessionmaker[Session], session_id: uuid.UUID) -> bool:
    """Whether the session's close task still has its outbox row (deleted once it settles)."""
    with session_scope(sessions) as db:
        rows = db.scalars(
            select(OutboxTask.args).where(
                OutboxTask.task_name == TaskName.CLOSE_MEMORY_SESSION,
                OutboxTask.status.in_([OutboxStatus.PENDING, OutboxStatus.SENT]),
            )
        )
        return any(str(session_id) in [str(a) for a in args] for args in rows)
