"""Neo4j restarts in the middle of a graph build: the final graph equals a clean run's."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest
from neo4j import Driver

from tests.e2e.test_graph_build import document_text, graph_kb, script_extractions
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import all_chunks, upload, wait_terminal
from tests.support.graph_helpers import graph_nodes, graph_relations, remove_label
from tests.support.services import ROOT
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

LLM_DELAY_S = 1.5
FANOUT_TIMEOUT_S = 120.0


def _restart_neo4j() -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "deploy/local/services.py"), "neo4j", "restart"],
        check=True,
        cwd=ROOT,
    )


def _graph(
    driver: Driver, doc_id: str
) -> tuple[dict[str, tuple[str, ...]], set[tuple[str, str, str]]]:
    nodes = graph_nodes(driver, doc_id)
    return {n: tuple(sorted(v["attributes"])) for n, v in nodes.items()}, graph_relations(
        driver, doc_id
    )


def test_restart_mid_run_gives_the_clean_graph(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    slow = {"delay_s": LLM_DELAY_S}
    script_extractions(fresh_scripted_llm, ALPHA=slow, BRAVO=slow, CHARLIE=slow)
    kb = graph_kb(http)
    clean = wait_terminal(
        http, upload(http, kb["id"], "clean.md", document_text().encode()).json()["id"]
    )
    assert clean["parse_status"] == "completed" and clean["failed_chunk_count"] == 0

    doc_id = upload(http, kb["id"], "restart.md", document_text().encode()).json()["id"]
    deadline = time.monotonic() + FANOUT_TIMEOUT_S
    while http.get(f"/api/v1/knowledge/{doc_id}").json()["parse_status"] != "finalizing":
        assert time.monotonic() < deadline, "never reached the graph stage"
        time.sleep(0.05)
    _restart_neo4j()
    doc = wait_terminal(http, doc_id)
    assert doc["parse_status"] == "completed", doc
    assert doc["failed_chunk_count"] == 0, [
        c["graph_error"] for c in all_chunks(http, doc_id) if c["graph_error"]
    ]
    assert _graph(neo4j_driver, doc_id) == _graph(neo4j_driver, clean["id"])
    assert (doc["entity_count"], doc["relation_count"]) == (
        clean["entity_count"],
        clean["relation_count"],
    )
    remove_label(neo4j_driver, kb["id"])
