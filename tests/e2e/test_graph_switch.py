"""A base's graph switch flipped on existing documents: on builds their graph through the
outbox and the worker, with progress in the `graph` stage; off stops the extraction still owed."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from neo4j import Driver

from tests.e2e.test_graph_build import (
    CHUNKING,
    TAGS,
    document_text,
    script_extractions,
)
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import all_chunks, create_kb, upload, wait_terminal
from tests.support.graph_helpers import graph_nodes, graph_relations, remove_label
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

SELECTED = 4  # three scripted paragraphs and the uuid line
WAIT_S = 120.0
DELAY_S = 3.0  # each scripted extraction answer, while the switch goes off


def _switch(http: httpx.Client, kb_id: str, on: bool) -> dict[str, Any]:
    response = http.patch(
        f"/api/v1/knowledge-bases/{kb_id}", json={"indexing": {"graph_enabled": on}}
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["graph_on"] is on
    return body


def _graph_stage(http: httpx.Client, doc_id: str) -> dict[str, Any]:
    stage: dict[str, Any] = http.get(f"/api/v1/knowledge/{doc_id}/stages").json()["stages"]["graph"]
    return stage


def _statuses(http: httpx.Client, doc_id: str) -> list[str]:
    return sorted(c["graph_status"] for c in all_chunks(http, doc_id))


def _indexed_without_graph(http: httpx.Client) -> tuple[dict[str, Any], str]:
    kb = create_kb(
        http,
        chunking=CHUNKING,
        indexing={"graph_enabled": False},
        extract_config={"enabled": True, "tags": TAGS},
    )
    assert kb["graph_on"] is False
    doc = wait_terminal(http, upload(http, kb["id"], "s.md", document_text().encode()).json()["id"])
    assert doc["parse_status"] == "completed"
    assert set(_statuses(http, doc["id"])) == {"skipped"}
    return kb, doc["id"]


def test_turning_the_graph_on_builds_it_for_completed_documents(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    script_extractions(fresh_scripted_llm, ALPHA={"delay_s": 1.0})
    kb, doc_id = _indexed_without_graph(http)
    assert fresh_scripted_llm.requests("/v1/chat/completions") == []

    _switch(http, kb["id"], True)
    right_after = http.get(f"/api/v1/knowledge/{doc_id}").json()
    assert right_after["parse_status"] == "finalizing"  # ALPHA's answer takes a second
    running = _graph_stage(http, doc_id)
    assert running["status"] == "running" and running["total"] == SELECTED
    assert 0 <= running["done"] < SELECTED

    doc = wait_terminal(http, doc_id, WAIT_S)
    assert doc["parse_status"] == "completed" and doc["failed_chunk_count"] == 0
    stage = _graph_stage(http, doc_id)
    assert (stage["status"], stage["done"], stage["total"]) == ("done", SELECTED, SELECTED)
    assert _statuses(http, doc_id).count("done") == SELECTED
    assert set(graph_nodes(neo4j_driver, doc_id)) == {
        "Ada Moreau",
        "Northwind Robotics",
        "Lyon",
        "Harbor Logistics",
        "Sorter X2",
    }
    assert ("Ada Moreau", "founded", "Northwind Robotics") in graph_relations(neo4j_driver, doc_id)
    assert len(fresh_scripted_llm.requests("/v1/chat/completions")) == SELECTED
    graph_search = http.post(
        f"/api/v1/knowledge-bases/{kb['id']}/graph-search", json={"entity": "Ada"}
    )
    assert graph_search.status_code == 200 and graph_search.json()["entities"]
    remove_label(neo4j_driver, kb["id"])


def test_turning_the_graph_off_stops_pending_extraction(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    slow = {"delay_s": DELAY_S}
    script_extractions(fresh_scripted_llm, ALPHA=slow, BRAVO=slow, CHARLIE=slow)
    kb, doc_id = _indexed_without_graph(http)
    _switch(http, kb["id"], True)
    assert http.get(f"/api/v1/knowledge/{doc_id}").json()["parse_status"] == "finalizing"

    _switch(http, kb["id"], False)
    doc = http.get(f"/api/v1/knowledge/{doc_id}").json()
    assert doc["parse_status"] == "completed" and doc["pending_subtasks_count"] == 0
    stage = _graph_stage(http, doc_id)
    assert stage["status"] == "cancelled" and stage["done"] < SELECTED
    assert stage["skipped"] == SELECTED - stage["done"] and "turned off" in stage["detail"]
    chunks = all_chunks(http, doc_id)
    assert "pending" not in {c["graph_status"] for c in chunks}
    skipped = [c for c in chunks if c["graph_error"] and "turned off" in c["graph_error"]]
    assert len(skipped) == SELECTED - stage["done"]

    # Tasks running when the switch went off end without writing: once their scripted answers
    # are in (every one was asked before the switch, and takes DELAY_S), nothing has moved.
    time.sleep(DELAY_S + 1.0)
    assert http.get(f"/api/v1/knowledge/{doc_id}").json()["parse_status"] == "completed"
    assert all_chunks(http, doc_id) == chunks
    assert graph_nodes(neo4j_driver, doc_id) == {}
    search = http.post(f"/api/v1/knowledge-bases/{kb['id']}/graph-search", json={"entity": "Ada"})
    assert search.status_code == 503 and search.json()["error"]["code"] == "kb_graph_disabled"

    # On again: only the chunks without a graph are extracted.
    script_extractions(fresh_scripted_llm)
    fresh_scripted_llm.clear_requests()
    _switch(http, kb["id"], True)
    doc = wait_terminal(http, doc_id, WAIT_S)
    assert doc["parse_status"] == "completed"
    assert _statuses(http, doc_id).count("done") == SELECTED
    calls = len(fresh_scripted_llm.requests("/v1/chat/completions"))
    assert calls == len(skipped)
    remove_label(neo4j_driver, kb["id"])
