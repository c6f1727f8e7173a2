"""Agent chat over real services: the model calls `query_knowledge_graph`, which reads Neo4j,
and the steps stream as real Server-Sent Events; without a graph the tool is not offered."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
from neo4j import Driver

from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import chat_usage, create_kb, read_sse, upload, wait_terminal
from tests.support.graph_helpers import kb_graph_rule, remove_label
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

QUESTION = "Who runs the Zorvath Industries plant?"
ANSWER = "The plant is run by Elin Brask [2]."
GRAPH_TEXT = {
    "DIST1": "DIST1. Zorvath Industries runs a plant in Tromso that builds ship engines.",
    "TARGET": "TARGET. Elin Brask keeps bees and plays the cello on weekends.",
}
PLAIN_TEXT = "PLAIN. Zorvath Industries sponsors the Tromso rowing club."
STEP = "This is step {n} of"


def _match(settings: Settings, text: str) -> dict[str, Any]:
    # Without a system role the system text leads the first user turn, the only one here.
    return {"system" if settings.llm.system_role else "user": {"contains": text}}


def _agent_rules(settings: Settings, tool: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Step 1 calls `tool`; step 2 answers."""
    return [
        {
            "name": "step1",
            "match": _match(settings, STEP.format(n=1)),
            "reply": {"content": "", "tool_calls": [{"name": tool, "arguments": arguments}]},
        },
        {
            "name": "step2",
            "match": _match(settings, STEP.format(n=2)),
            "reply": {"content": ANSWER},
        },
    ]


def _sse(client: httpx.Client, session_id: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    return read_sse(client, f"/api/v1/agent-chat/{session_id}", body)


def _agent_requests(llm: ScriptedLlmServer) -> list[dict[str, Any]]:
    bodies = [r.body for r in llm.requests("/v1/chat/completions")]
    return [b for b in bodies if isinstance(b, dict) and STEP.split("{")[0] in json.dumps(b)]


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def _steps(events: list[tuple[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [data for name, data in events if name == "step" and data["kind"] == kind]


def test_agent_queries_the_graph_and_streams_its_steps(
    http: httpx.Client,
    worker: WorkerProcess,
    settings: Settings,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    rules = [
        kb_graph_rule(
            "DIST1",
            [{"name": "Zorvath Industries"}, {"name": "Elin Brask", "attributes": ["director"]}],
            [{"node1": "Elin Brask", "node2": "Zorvath Industries", "type": "runs"}],
        ),
        kb_graph_rule("TARGET", [{"name": "Elin Brask", "attributes": ["beekeeper"]}], []),
        *_agent_rules(settings, "query_knowledge_graph", {"entities": ["Zorvath Industries"]}),
    ]
    fresh_scripted_llm.set_rules(rules, default={"content": "no entities here"})
    graph_kb = create_kb(
        http,
        chunking={"chunk_size": 90, "chunk_overlap": 0, "separators": ["\n\n"]},
        indexing={"graph_enabled": True},
        extract_config={"enabled": True, "tags": ["runs"]},
    )
    plain_kb = create_kb(http)
    text = "\n\n".join(GRAPH_TEXT.values()) + f"\n\n{uuid.uuid4()}"
    doc = wait_terminal(http, upload(http, graph_kb["id"], "z.md", text.encode()).json()["id"])
    assert doc["relation_count"] == 1, doc
    plain = upload(http, plain_kb["id"], "p.md", f"{PLAIN_TEXT}\n{uuid.uuid4()}".encode())
    assert wait_terminal(http, plain.json()["id"])["parse_status"] == "completed"
    kb_ids = [graph_kb["id"], plain_kb["id"]]
    session = http.post("/api/v1/sessions", json={"kb_ids": kb_ids}).json()

    fresh_scripted_llm.clear_requests()
    events = _sse(http, session["id"], {"query": QUESTION})

    names = [name for name, _ in events]
    assert names[-3:] == ["references", "delta", "done"], names
    done = events[-1][1]
    assert (done["steps"], done["reflections"], done["forced"]) == (2, 0, False)
    assert done["usage"] == chat_usage(fresh_scripted_llm.requests("/v1/chat/completions"))
    assert done["usage"]["llm_calls"] == 2
    act = _steps(events, "act")
    assert [(a["tool"], a["arguments"]) for a in act] == [
        ("query_knowledge_graph", {"entities": ["Zorvath Industries"]})
    ]
    observed = _steps(events, "observe")[0]["detail"]
    assert {"Zorvath Industries", "Elin Brask"} <= set(observed["entities"])
    assert ["Elin Brask", "runs", "Zorvath Industries"] in observed["relations"]
    states = {s["kb_id"]: s["state"] for s in observed["knowledge_bases"]}
    assert states == {
        graph_kb["id"]: "graph_searched",
        plain_kb["id"]: "no_graph_hybrid_search",
    }
    refs = next(data for name, data in events if name == "references")["references"]
    by_marker = {r["excerpt"].split(".")[0]: r["match_type"] for r in refs}
    assert by_marker["TARGET"] == "graph" and by_marker["DIST1"] == "graph"
    assert by_marker["PLAIN"] != "graph"  # the base without a graph fell back to search
    assert "".join(d["content"] for n, d in events if n == "delta") == ANSWER

    sent = _agent_requests(fresh_scripted_llm)
    assert len(sent) == 2
    assert _tool_names(sent[0]) == ["knowledge_search", "query_knowledge_graph"]
    tool_message = next(m for m in sent[1]["messages"] if m["role"] == "tool")
    assert "Elin Brask" in tool_message["content"] and "TARGET" in tool_message["content"]

    stored = http.get(f"/api/v1/sessions/{session['id']}").json()["messages"]
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[1]["content"] == ANSWER and stored[1]["completed"] is True
    assert [s["kind"] for s in stored[1]["steps"]] == [s["kind"] for n, s in events if n == "step"]
    assert any(r["match_type"] == "graph" for r in stored[1]["references"])
    remove_label(neo4j_driver, graph_kb["id"])


def test_without_a_graph_the_tool_is_not_offered(
    http: httpx.Client,
    worker: WorkerProcess,
    settings: Settings,
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    # The model asks for the graph tool anyway: the call is refused as an observation.
    rules = _agent_rules(settings, "query_knowledge_graph", {"entities": ["Zorvath Industries"]})
    fresh_scripted_llm.set_rules(rules)
    kb = create_kb(http)
    doc = upload(http, kb["id"], "p.md", f"{PLAIN_TEXT}\n{uuid.uuid4()}".encode())
    wait_terminal(http, doc.json()["id"])
    session = http.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()

    answer = http.post(
        f"/api/v1/agent-chat/{session['id']}", json={"query": QUESTION, "stream": False}
    ).json()

    sent = _agent_requests(fresh_scripted_llm)
    assert [_tool_names(body) for body in sent] == [["knowledge_search"]] * 2
    assert answer["answer"] == ANSWER and answer["completed"] is True
    assert answer["error"] is None
    assert answer["usage"]["llm_calls"] == 2 and answer["usage"]["prompt_tokens"] > 0
    observed = next(s for s in answer["steps"] if s["kind"] == "observe")
    assert observed["detail"]["ok"] is False
    assert "no tool named 'query_knowledge_graph'" in observed["summary"]
    stored = http.get(f"/api/v1/sessions/{session['id']}").json()["messages"]
    assert stored[1]["completed"] is True and len(stored[1]["steps"]) == len(answer["steps"])


def test_llm_down_ends_with_an_error_and_keeps_the_question(
    http: httpx.Client, settings: Settings, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    fresh_scripted_llm.set_rules(
        [{"match": _match(settings, STEP.format(n=1)), "fault": {"status": 500}}]
    )
    kb = create_kb(http)
    session = http.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()
    events = _sse(http, session["id"], {"query": "Anything?"})
    assert events[-1][0] == "error" and events[-1][1]["code"] == "llm_unavailable"
    stored = http.get(f"/api/v1/sessions/{session['id']}").json()["messages"]
    assert stored[0]["content"] == "Anything?" and stored[1]["completed"] is False
    missing = http.post(f"/api/v1/agent-chat/{uuid.uuid4()}", json={"query": "x"})
    assert missing.status_code == 404
