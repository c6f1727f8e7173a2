"""Cross-document links and name vectors follow their documents through re-parse and delete,
and never touch another document's nodes."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from neo4j import Driver

from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb, upload, wait_terminal
from tests.support.graph_helpers import kb_graph_rule, remove_label
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

WAIT_S = 60.0
DOC_A = "DOCA. Orvex Arms opened a plant in Dayton."
DOC_B = "DOCB. Zentrac Rifles was started by gunsmiths from Orvex Arms."


def _rules() -> list[dict[str, Any]]:
    node: list[dict[str, Any]] = [{"name": n, "attributes": []} for n in ("Orvex Arms", "Dayton")]
    other: list[dict[str, Any]] = [
        {"name": n, "attributes": []} for n in ("Zentrac Rifles", "Orvex Arms")
    ]
    return [
        kb_graph_rule("DOCA", node, [{"node1": "Orvex Arms", "node2": "Dayton", "type": "in"}]),
        kb_graph_rule(
            "DOCB", other, [{"node1": "Zentrac Rifles", "node2": "Orvex Arms", "type": "from"}]
        ),
    ]


def _base_nodes(driver: Driver, kb_id: str) -> dict[str, tuple[int, bool]]:
    """key -> (document nodes linked, has a name vector)."""
    records, _, _ = driver.execute_query(
        "MATCH (c:BaseEntity {kb: $kb}) RETURN c.key AS key, "
        "COUNT { (c)<-[:INSTANCE_OF]-() } AS links, c.embedding IS NOT NULL AS vector",
        kb=kb_id,
    )
    return {r["key"]: (r["links"], r["vector"]) for r in records}


def _node_ids(driver: Driver, doc_id: str) -> set[str]:
    records, _, _ = driver.execute_query(
        "MATCH (n:GraphEntity {kg: $kg}) RETURN elementId(n) AS id", kg=doc_id
    )
    return {r["id"] for r in records}


def _wait_for(driver: Driver, kb_id: str, expected: dict[str, tuple[int, bool]]) -> None:
    deadline = time.monotonic() + WAIT_S
    while _base_nodes(driver, kb_id) != expected:
        assert time.monotonic() < deadline, _base_nodes(driver, kb_id)
        time.sleep(0.2)


def test_links_and_vectors_follow_reparse_and_delete(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    fresh_scripted_llm.set_rules(_rules(), default={"content": "no entities here"})
    kb = create_kb(
        http,
        indexing={"graph_enabled": True},
        extract_config={"enabled": True, "tags": ["in", "from"]},
    )
    doc_a = upload(http, kb["id"], "a.txt", DOC_A.encode()).json()["id"]
    doc_b = upload(http, kb["id"], "b.txt", DOC_B.encode()).json()["id"]
    for doc in (doc_a, doc_b):
        assert wait_terminal(http, doc)["parse_status"] == "completed"
    both = {"orvex arms": (2, True), "dayton": (1, True), "zentrac rifles": (1, True)}
    assert _base_nodes(neo4j_driver, kb["id"]) == both
    b_nodes = _node_ids(neo4j_driver, doc_b)

    assert http.post(f"/api/v1/knowledge/{doc_a}/reparse").status_code == 202
    assert wait_terminal(http, doc_a)["parse_status"] == "completed"
    _wait_for(neo4j_driver, kb["id"], both)
    assert _node_ids(neo4j_driver, doc_b) == b_nodes

    assert http.delete(f"/api/v1/knowledge/{doc_a}").status_code == 202
    _wait_for(neo4j_driver, kb["id"], {"orvex arms": (1, True), "zentrac rifles": (1, True)})
    assert _node_ids(neo4j_driver, doc_b) == b_nodes
    remove_label(neo4j_driver, kb["id"])
