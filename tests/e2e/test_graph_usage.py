"""A document's ingestion accounting over REST: its LLM calls and tokens are what the server
answered for it, each stage reports its seconds, and a re-parse counts from zero."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from neo4j import Driver

from tests.e2e.test_graph_build import PARAGRAPHS, document_text, graph_kb, script_extractions
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import all_chunks, upload, wait_terminal
from tests.support.graph_helpers import remove_label
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e


def _server_usage(llm: ScriptedLlmServer) -> tuple[int, int, int]:
    """(calls, prompt tokens, completion tokens) the server answered since its log was cleared
    (the test's document is the only one asking)."""
    calls = llm.requests("/v1/chat/completions")
    assert calls and all(r.usage for r in calls)
    prompt = sum(r.usage["prompt_tokens"] for r in calls if r.usage)
    completion = sum(r.usage["completion_tokens"] for r in calls if r.usage)
    return len(calls), prompt, completion


def _usage(doc: dict[str, Any]) -> tuple[int, int, int]:
    u = doc["usage"]
    return u["llm_calls"], u["llm_prompt_tokens"], u["llm_completion_tokens"]


def test_usage_matches_the_server_and_restarts_with_a_reparse(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    script_extractions(fresh_scripted_llm)
    kb = graph_kb(http)
    text = document_text()
    doc = wait_terminal(http, upload(http, kb["id"], "usage.md", text.encode()).json()["id"])
    assert doc["parse_status"] == "completed"
    assert _usage(doc) == _server_usage(fresh_scripted_llm)
    graph_chunks = [c for c in all_chunks(http, doc["id"]) if c["graph_status"] == "done"]
    assert doc["usage"]["llm_calls"] == len(graph_chunks) > len(PARAGRAPHS) - 1
    assert doc["usage"]["graph_retries"] == 0

    stages = http.get(f"/api/v1/knowledge/{doc['id']}/stages").json()
    assert stages["usage"] == doc["usage"]
    for name in ("parse", "embed", "index", "graph"):
        assert stages["stages"][name]["seconds"] > 0, (name, stages["stages"][name])
    assert stages["stages"]["graph"]["seconds"] == doc["usage"]["graph_seconds"]

    fresh_scripted_llm.clear_requests()
    assert http.post(f"/api/v1/knowledge/{doc['id']}/reparse").status_code == 202
    again = wait_terminal(http, doc["id"])
    assert again["attempt"] == 2 and again["parse_status"] == "completed"
    assert _usage(again) == _server_usage(fresh_scripted_llm)
    assert again["usage"]["llm_calls"] == len(graph_chunks)
    remove_label(neo4j_driver, kb["id"])
