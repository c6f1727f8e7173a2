"""Upload -> worker -> one LLM call per chunk -> APOC merge in Neo4j, checked node by node."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from celery import Celery
from neo4j import Driver

from graphrag.graph.labels import ENTITY_KEY_LABEL, entity_label
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import all_chunks, create_kb, upload, wait_terminal
from tests.support.graph_helpers import graph_nodes, graph_relations, kb_graph_rule, remove_label
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

TAGS = ["founded", "located_in", "uses", "makes"]
CHUNKING = {"chunk_size": 80, "chunk_overlap": 0, "separators": ["\n\n"]}

PARAGRAPHS = {
    "ALPHA": "ALPHA. Ada Moreau founded Northwind Robotics in Lyon.",
    "BRAVO": "BRAVO. Harbor Logistics uses the Sorter X2 in Rotterdam.",
    "CHARLIE": "CHARLIE. Northwind Robotics makes the Sorter X2 for Harbor Logistics.",
}
EXTRACTIONS = {
    "ALPHA": (
        [
            {"name": "Ada Moreau", "attributes": ["founder"]},
            {"name": "Northwind Robotics", "attributes": ["company"]},
            {"name": "Lyon", "attributes": []},
        ],
        [
            {"node1": "Ada Moreau", "node2": "Northwind Robotics", "type": "founded"},
            {"node1": "Northwind Robotics", "node2": "Lyon", "type": "located_in"},
        ],
    ),
    "BRAVO": (
        [
            {"name": "Harbor Logistics", "attributes": ["shipping"]},
            {"name": "Sorter X2", "attributes": ["robot"]},
        ],
        [{"node1": "Harbor Logistics", "node2": "Sorter X2", "type": "uses"}],
    ),
    "CHARLIE": (
        [
            {"name": "Northwind Robotics", "attributes": ["robot maker"]},
            {"name": "Sorter X2", "attributes": []},
        ],
        [{"node1": "Northwind Robotics", "node2": "Sorter X2", "type": "makes"}],
    ),
}


def graph_kb(http: httpx.Client) -> dict[str, Any]:
    return create_kb(
        http,
        chunking=CHUNKING,
        indexing={"graph_enabled": True},
        extract_config={"enabled": True, "tags": TAGS},
    )


def script_extractions(llm: ScriptedLlmServer, **fault_by_marker: dict[str, Any]) -> None:
    rules = [
        kb_graph_rule(
            marker,
            nodes,
            rels,
            **({"fault": fault_by_marker[marker]} if marker in fault_by_marker else {}),
        )
        for marker, (nodes, rels) in EXTRACTIONS.items()
    ]
    llm.set_rules(rules, default={"content": "I cannot find entities here."})


def document_text() -> str:
    return "\n\n".join(PARAGRAPHS.values()) + f"\n\nunique {uuid.uuid4()}"


def test_graph_matches_the_scripted_extractions(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    script_extractions(fresh_scripted_llm)
    kb = graph_kb(http)
    assert kb["graph_on"] is True
    response = upload(http, kb["id"], "story.md", document_text().encode())
    doc = wait_terminal(http, response.json()["id"])
    assert doc["parse_status"] == "completed", doc
    chunks = {c["content"].split(".")[0]: c["id"] for c in all_chunks(http, doc["id"])}

    nodes = graph_nodes(neo4j_driver, doc["id"])
    assert set(nodes) == {
        "Ada Moreau",
        "Northwind Robotics",
        "Lyon",
        "Harbor Logistics",
        "Sorter X2",
    }
    for node in nodes.values():
        assert set(node["labels"]) == {
            ENTITY_KEY_LABEL,
            entity_label(kb["id"]),
            entity_label(doc["id"]),
        }
        assert node["kg"] == doc["id"]
    assert sorted(nodes["Northwind Robotics"]["chunks"]) == sorted(
        [chunks["ALPHA"], chunks["CHARLIE"]]
    )
    assert sorted(nodes["Sorter X2"]["chunks"]) == sorted([chunks["BRAVO"], chunks["CHARLIE"]])
    assert nodes["Ada Moreau"]["chunks"] == [chunks["ALPHA"]]
    assert sorted(nodes["Northwind Robotics"]["attributes"]) == ["company", "robot maker"]
    assert graph_relations(neo4j_driver, doc["id"]) == {
        ("Ada Moreau", "founded", "Northwind Robotics"),
        ("Northwind Robotics", "located_in", "Lyon"),
        ("Harbor Logistics", "uses", "Sorter X2"),
        ("Northwind Robotics", "makes", "Sorter X2"),
    }
    assert doc["entity_count"] == 5 and doc["relation_count"] == 4
    # One extraction call per selected chunk; the fourth chunk (the uuid line) answers prose.
    calls = fresh_scripted_llm.requests("/v1/chat/completions")
    assert len(calls) == 4
    stages = http.get(f"/api/v1/knowledge/{doc['id']}/stages").json()["stages"]
    graph_stage = stages["graph"]
    assert graph_stage.pop("seconds") > 0  # the stage's own wall time
    assert graph_stage == {"status": "done", "done": 4, "total": 4, "skipped": 0, "detail": None}
    remove_label(neo4j_driver, kb["id"])


def test_graph_off_kb_never_calls_the_llm(
    http: httpx.Client, worker: WorkerProcess, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    kb = create_kb(http, chunking=CHUNKING)
    doc = wait_terminal(http, upload(http, kb["id"], "a.md", document_text().encode()).json()["id"])
    assert doc["parse_status"] == "completed" and doc["pending_subtasks_count"] == 0
    assert fresh_scripted_llm.requests("/v1/chat/completions") == []


def test_duplicate_deliveries_count_each_chunk_once(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
    celery_app: Celery,
) -> None:
    """Every extraction task is sent twice while the first copies still run."""
    slow = {"delay_s": 1.0}
    script_extractions(fresh_scripted_llm, ALPHA=slow, BRAVO=slow, CHARLIE=slow)
    kb = graph_kb(http)
    response = upload(http, kb["id"], "dup.md", document_text().encode())
    doc_id = response.json()["id"]
    chunk_ids = _wait_for_graph_fanout(http, doc_id)
    for chunk_id in chunk_ids:
        celery_app.send_task("graph.extract_chunk", args=[doc_id, 1, chunk_id])
    doc = wait_terminal(http, doc_id)
    assert doc["parse_status"] == "completed"
    assert doc["pending_subtasks_count"] == 0 and doc["failed_chunk_count"] == 0
    assert doc["entity_count"] == 5 and doc["relation_count"] == 4
    statuses = {c["graph_status"] for c in all_chunks(http, doc_id)}
    assert statuses == {"done"}
    remove_label(neo4j_driver, kb["id"])


def _wait_for_graph_fanout(http: httpx.Client, doc_id: str) -> list[str]:
    import time

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        doc = http.get(f"/api/v1/knowledge/{doc_id}").json()
        if doc["parse_status"] == "finalizing":
            return [c["id"] for c in all_chunks(http, doc_id) if c["graph_status"] == "pending"]
        assert doc["parse_status"] in {"pending", "processing"}, doc
        time.sleep(0.05)
    raise AssertionError("document never reached finalizing")
