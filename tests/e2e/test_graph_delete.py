"""Deleting or re-parsing a document, or deleting a base, leaves nothing of it in the graph."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from neo4j import Driver

from graphrag.graph.labels import entity_label
from tests.e2e.test_graph_build import document_text, graph_kb, script_extractions
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import all_chunks, upload, wait_terminal
from tests.support.graph_helpers import graph_nodes, kb_graph_rule, remove_label
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

GONE_TIMEOUT_S = 60.0


def _count(driver: Driver, query: str, **params: Any) -> int:
    records, _, _ = driver.execute_query(query, **params)
    return int(records[0][0])


def _nodes_of_document(driver: Driver, doc_id: str) -> int:
    return _count(driver, "MATCH (n {kg: $kg}) RETURN count(n)", kg=doc_id)


def _wait_until(predicate: Any) -> None:
    deadline = time.monotonic() + GONE_TIMEOUT_S
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def _ingest(http: httpx.Client, kb: dict[str, Any], name: str) -> dict[str, Any]:
    doc = wait_terminal(http, upload(http, kb["id"], name, document_text().encode()).json()["id"])
    assert doc["parse_status"] == "completed" and doc["entity_count"] == 5, doc
    return doc


def test_document_delete_removes_its_graph_only(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    script_extractions(fresh_scripted_llm)
    kb = graph_kb(http)
    gone, kept = _ingest(http, kb, "gone.md"), _ingest(http, kb, "kept.md")
    assert http.delete(f"/api/v1/knowledge/{gone['id']}").status_code == 202
    _wait_until(lambda: _nodes_of_document(neo4j_driver, gone["id"]) == 0)
    assert graph_nodes(neo4j_driver, gone["id"]) == {}
    assert len(graph_nodes(neo4j_driver, kept["id"])) == 5
    # No relation leads out of the kept document's nodes to anything that is gone.
    assert (
        _count(
            neo4j_driver,
            "MATCH ({kg: $kg})-[r]-(m) WHERE m.kg <> $kg RETURN count(r)",
            kg=kept["id"],
        )
        == 0
    )
    remove_label(neo4j_driver, kb["id"])


def test_reparse_replaces_the_graph(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    script_extractions(fresh_scripted_llm)
    kb = graph_kb(http)
    doc = _ingest(http, kb, "r.md")
    fresh_scripted_llm.set_rules(
        [kb_graph_rule("ALPHA", [{"name": "Lyon", "attributes": ["city"]}], [])],
        default={"content": "no entities"},
    )
    assert http.post(f"/api/v1/knowledge/{doc['id']}/reparse").status_code == 202
    doc = wait_terminal(http, doc["id"])
    assert doc["parse_status"] == "completed" and doc["attempt"] == 2
    after = graph_nodes(neo4j_driver, doc["id"])
    assert set(after) == {"Lyon"}
    chunk_ids = {c["id"] for c in all_chunks(http, doc["id"])}
    assert set(after["Lyon"]["chunks"]) <= chunk_ids
    assert after["Lyon"]["attributes"] == ["city"]
    assert doc["entity_count"] == 1 and doc["relation_count"] == 0
    remove_label(neo4j_driver, kb["id"])


def test_kb_delete_removes_the_whole_graph(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    script_extractions(fresh_scripted_llm)
    kb = graph_kb(http)
    index = f"name_{entity_label(kb['id'])}"
    docs = [_ingest(http, kb, f"{i}.md") for i in range(2)]
    assert _count(neo4j_driver, "SHOW INDEXES YIELD name WHERE name = $n RETURN count(*)", n=index)
    assert http.delete(f"/api/v1/knowledge-bases/{kb['id']}").status_code == 202
    _wait_until(lambda: not graph_nodes(neo4j_driver, kb["id"]))
    for doc in docs:
        assert _nodes_of_document(neo4j_driver, doc["id"]) == 0
    _wait_until(
        lambda: (
            _count(neo4j_driver, "SHOW INDEXES YIELD name WHERE name = $n RETURN count(*)", n=index)
            == 0
        )
    )
