"""LLM faults: transient ones are retried, then the chunk fails with a reason and the document
still completes; prose and empty answers are a chunk without a graph, not a retry."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from neo4j import Driver

from tests.e2e.test_graph_build import document_text, graph_kb, script_extractions
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import all_chunks, upload, wait_terminal
from tests.support.graph_helpers import graph_nodes, remove_label
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

MAX_TRIES = 4  # the first call and graph_max_retries (3) retries


def _calls_for(llm: ScriptedLlmServer, marker: str) -> int:
    return sum(1 for r in llm.requests("/v1/chat/completions") if marker in json.dumps(r.body))


def _run(http: httpx.Client, llm: ScriptedLlmServer, **faults: dict[str, Any]) -> dict[str, Any]:
    script_extractions(llm, **faults)
    kb = graph_kb(http)
    doc = wait_terminal(http, upload(http, kb["id"], "f.md", document_text().encode()).json()["id"])
    assert doc["parse_status"] == "completed", doc
    doc["kb"] = kb
    return doc


@pytest.mark.parametrize(
    "fault",
    [
        {"status": 500},
        {"status": 503},
        {"malformed_json": True},
        {"delay_s": 8.0},
        {"drop_connection": True},
    ],
    ids=["http500", "http503", "malformed-body", "timeout", "connection-dropped"],
)
def test_persistent_fault_fails_the_chunk_after_retries(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
    fault: dict[str, Any],
) -> None:
    doc = _run(http, fresh_scripted_llm, BRAVO=fault)
    assert doc["failed_chunk_count"] == 1 and doc["pending_subtasks_count"] == 0
    failed = [c for c in all_chunks(http, doc["id"]) if c["graph_status"] == "failed"]
    assert len(failed) == 1 and failed[0]["content"].startswith("BRAVO")
    assert failed[0]["graph_error"]
    assert _calls_for(fresh_scripted_llm, "BRAVO.") == MAX_TRIES
    nodes = graph_nodes(neo4j_driver, doc["id"])
    assert "Harbor Logistics" not in nodes and "Ada Moreau" in nodes
    remove_label(neo4j_driver, doc["kb"]["id"])


def test_transient_fault_is_retried_until_it_passes(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    doc = _run(http, fresh_scripted_llm, BRAVO={"status": 500, "times": 2})
    assert doc["failed_chunk_count"] == 0
    assert _calls_for(fresh_scripted_llm, "BRAVO.") == 3
    assert "Harbor Logistics" in graph_nodes(neo4j_driver, doc["id"])
    remove_label(neo4j_driver, doc["kb"]["id"])


def test_dropped_connections_are_retried_and_counted(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    # The LLM hangs up without answering on the chunk's first tries, fewer than its retries.
    cuts = MAX_TRIES - 2
    doc = _run(http, fresh_scripted_llm, BRAVO={"drop_connection": True, "times": cuts})
    assert doc["failed_chunk_count"] == 0
    assert _calls_for(fresh_scripted_llm, "BRAVO.") == cuts + 1
    assert doc["usage"]["graph_retries"] == cuts
    assert "Harbor Logistics" in graph_nodes(neo4j_driver, doc["id"])
    remove_label(neo4j_driver, doc["kb"]["id"])


@pytest.mark.parametrize(
    "answer",
    ["I am sorry, I cannot extract entities from this text.", "", '```json\n{"nodes": ['],
    ids=["prose", "empty", "truncated-to-nothing"],
)
def test_unusable_answer_is_no_graph_and_no_retry(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
    answer: str,
) -> None:
    script_extractions(fresh_scripted_llm)
    rules = [r.model_dump(exclude_none=True) for r in fresh_scripted_llm.state.script.rules]
    prose = {
        "name": "prose",
        "match": {"user": {"contains": "BRAVO."}},
        "reply": {"content": answer},
    }
    fresh_scripted_llm.set_rules([prose, *rules], default={"content": "nothing here"})
    kb = graph_kb(http)
    doc = wait_terminal(http, upload(http, kb["id"], "p.md", document_text().encode()).json()["id"])
    assert doc["parse_status"] == "completed" and doc["failed_chunk_count"] == 0
    assert _calls_for(fresh_scripted_llm, "BRAVO.") == 1
    assert "Harbor Logistics" not in graph_nodes(neo4j_driver, doc["id"])
    remove_label(neo4j_driver, kb["id"])
