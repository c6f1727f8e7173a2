"""What one chunk's extraction sends to the model and what it leaves on the chunk, read from
the scripted server's request log and the chunk API (real worker, PostgreSQL and Neo4j)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from neo4j import Driver

from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import all_chunks, create_kb, upload, wait_terminal
from tests.support.graph_helpers import kb_graph_rule, remove_label
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

MARKER = "TRACEPROBE"
TEXT = f"{MARKER}. Ada Moreau founded Northwind Robotics in Lyon with Brice Tal and Cora Vey."
NODES = ["Ada Moreau", "Northwind Robotics", "Lyon", "Brice Tal", "Cora Vey", "Dax Orel"]
RELATIONS = [
    {"node1": "Ada Moreau", "node2": "Northwind Robotics", "type": "founded"},
    {"node1": "Northwind Robotics", "node2": "Lyon", "type": "located_in"},
]
# The specification's extraction call: temperature 0.3, room for 8192 tokens, thinking off.
SPEC_TEMPERATURE = 0.3
SPEC_MAX_TOKENS = 8192

Extracted = tuple[dict[str, Any], dict[str, Any], dict[str, Any]]


@pytest.fixture(scope="module")
def extracted(
    http_module: httpx.Client,
    worker: WorkerProcess,
    scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> Iterator[Extracted]:
    """One chunk extracted with graph on: the extraction request, the chunk, the document."""
    scripted_llm.reset()
    rule = kb_graph_rule(MARKER, [{"name": n} for n in NODES], RELATIONS)
    scripted_llm.set_rules([rule], default={"content": "no entities here"})
    kb = create_kb(
        http_module,
        indexing={"graph_enabled": True},
        extract_config={"enabled": True, "tags": ["founded", "located_in"]},
    )
    body = f"{TEXT}\n{uuid.uuid4()}".encode()
    doc = upload(http_module, kb["id"], "trace.md", body).json()
    done = wait_terminal(http_module, doc["id"])
    bodies = [r.body for r in scripted_llm.requests("/v1/chat/completions")]
    [request] = [b for b in bodies if isinstance(b, dict) and MARKER in str(b["messages"])]
    [chunk] = all_chunks(http_module, doc["id"])
    yield request, chunk, done
    remove_label(neo4j_driver, kb["id"])


def test_extraction_request_carries_the_specified_options(
    extracted: Extracted, settings: Settings
) -> None:
    request, _, done = extracted
    assert done["parse_status"] == "completed"
    assert request["temperature"] == SPEC_TEMPERATURE
    assert request["max_tokens"] == SPEC_MAX_TOKENS
    assert request["chat_template_kwargs"] == {"enable_thinking": False}
    assert request["response_format"]["type"] == "json_object"
    assert settings.llm.max_tokens == SPEC_MAX_TOKENS  # the defaults were not overridden


def test_each_extraction_leaves_a_trace_on_its_chunk(
    extracted: Extracted, settings: Settings
) -> None:
    _, chunk, done = extracted
    sample = settings.extraction.trace_sample
    assert len(NODES) > sample  # the trace keeps only the first names
    trace = chunk["graph_trace"]
    assert chunk["graph_status"] == "done"
    assert trace["nodes"] == len(NODES) and trace["relations"] == len(RELATIONS)
    assert trace["names"] == NODES[:sample]
    assert trace["relation_samples"] == [[r["node1"], r["type"], r["node2"]] for r in RELATIONS]
    assert (trace["output"], trace["finish_reason"]) == ("ok", "stop")
    assert (trace["dropped_nodes"], trace["dropped_relations"]) == (0, 0)
    assert done["entity_count"] == len(NODES)
