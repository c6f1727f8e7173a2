"""Chat over real services: the graph brings in a chunk that vector and keyword search miss,
and the answer streams as real Server-Sent Events over HTTP."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from neo4j import Driver

from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import chat_usage, create_kb, read_sse, upload, wait_terminal
from tests.support.graph_helpers import kb_graph_rule, remove_label
from tests.support.http_server import ThreadedServer
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

CHAT_TOP_K = 6  # every chunk search finds may enter: only the graph can add TARGET
DISCONNECT_TIMEOUT_S = 30.0
QUESTION = "Who runs the Zorvath Industries plant in Tromso?"
ANSWER = "The plant is run by Elin Brask [4]."
# Four chunks close to the question, and the one holding the answer, which is not.
CHUNKS = {
    "DIST1": "DIST1. Zorvath Industries runs a plant in Tromso that builds ship engines.",
    "DIST2": "DIST2. The Zorvath Industries plant in Tromso opened in 1998 near the harbour.",
    "DIST3": "DIST3. Zorvath Industries plant workers in Tromso won a safety award.",
    "DIST4": "DIST4. Tromso hosts the Zorvath Industries plant and its training centre.",
    "TARGET": "TARGET. Elin Brask keeps bees and plays the cello on weekends.",
}


def _rules() -> list[dict[str, Any]]:
    zorvath = [{"name": "Zorvath Industries", "attributes": ["engine maker"]}]
    rules: list[dict[str, Any]] = [
        {
            "name": "entities",
            "match": {"user": {"contains": "list the named things"}},
            "reply": {"content": json.dumps(["Zorvath Industries"])},
        },
        {
            "name": "answer",
            "match": {"user": {"contains": "Passages:"}},
            "reply": {"content": ANSWER},
        },
        kb_graph_rule(
            "DIST1",
            [*zorvath, {"name": "Elin Brask", "attributes": ["director"]}],
            [{"node1": "Elin Brask", "node2": "Zorvath Industries", "type": "runs"}],
        ),
        kb_graph_rule("TARGET", [{"name": "Elin Brask", "attributes": ["beekeeper"]}], []),
    ]
    return rules


@pytest.fixture(scope="module")
def chat_api(settings: Settings, auth_headers: dict[str, str]) -> Iterator[httpx.Client]:
    """An API whose chat keeps the top 6 passages."""
    from api.app import create_app

    chat = settings.chat.model_copy(update={"top_k": CHAT_TOP_K})
    app = create_app(settings.model_copy(update={"chat": chat}))
    with (
        ThreadedServer(app) as url,
        httpx.Client(base_url=url, timeout=60.0, headers=auth_headers) as client,
    ):
        yield client


def _sse(client: httpx.Client, session_id: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    return read_sse(client, f"/api/v1/knowledge-chat/{session_id}", body)


def _reference_chunks(events: list[tuple[str, Any]]) -> dict[str, str]:
    refs = next(data for name, data in events if name == "references")["references"]
    return {ref["excerpt"].split(".")[0]: ref["match_type"] for ref in refs}


def test_graph_reaches_the_chunk_search_misses(
    chat_api: httpx.Client,
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    fresh_scripted_llm.set_rules(_rules(), default={"content": "no entities here"})
    kb = create_kb(
        http,
        chunking={"chunk_size": 90, "chunk_overlap": 0, "separators": ["\n\n"]},
        indexing={"graph_enabled": True},
        extract_config={"enabled": True, "tags": ["runs"]},
    )
    text = "\n\n".join(CHUNKS.values()) + f"\n\n{uuid.uuid4()}"
    doc = wait_terminal(http, upload(http, kb["id"], "zorvath.md", text.encode()).json()["id"])
    assert doc["parse_status"] == "completed" and doc["relation_count"] == 1, doc
    session = chat_api.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()

    fresh_scripted_llm.clear_requests()
    with_graph = _sse(chat_api, session["id"], {"query": QUESTION})
    names = [name for name, _ in with_graph]
    assert names[0] == "references" and names[-1] == "done"
    # The question's entity names, then the answer: both calls' counts, as the server gave them.
    usage = with_graph[-1][1]["usage"]
    assert usage == chat_usage(fresh_scripted_llm.requests("/v1/chat/completions"))
    assert usage["llm_calls"] == 2 and usage["completion_tokens"] > len(ANSWER.split())
    assert "".join(d["content"] for n, d in with_graph if n == "delta") == ANSWER
    refs = _reference_chunks(with_graph)
    assert refs.get("TARGET") == "graph", refs
    assert len(refs) <= CHAT_TOP_K  # the graph ranks its chunk in, it does not append it

    without = _sse(chat_api, session["id"], {"query": QUESTION, "use_graph": False})
    assert "TARGET" not in _reference_chunks(without)

    stored = chat_api.get(f"/api/v1/sessions/{session['id']}").json()["messages"]
    assert [m["role"] for m in stored] == ["user", "assistant", "user", "assistant"]
    assert stored[1]["content"] == ANSWER and stored[1]["completed"] is True
    assert any(r["match_type"] == "graph" for r in stored[1]["references"])
    remove_label(neo4j_driver, kb["id"])


def test_json_variant_and_follow_up_uses_history(
    chat_api: httpx.Client,
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    fresh_scripted_llm.set_rules(_rules(), default={"content": "no entities here"})
    kb = create_kb(http)
    wait_terminal(http, upload(http, kb["id"], "z.md", CHUNKS["DIST1"].encode()).json()["id"])
    session = chat_api.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()
    fresh_scripted_llm.clear_requests()
    first = chat_api.post(
        f"/api/v1/knowledge-chat/{session['id']}", json={"query": QUESTION, "stream": False}
    ).json()
    assert first["answer"] == ANSWER and first["completed"] is True and first["error"] is None
    assert first["usage"] == chat_usage(fresh_scripted_llm.requests("/v1/chat/completions"))
    assert first["usage"]["llm_calls"] == 1  # no graph in scope: the answer only
    assert first["references"][0]["excerpt"].startswith("DIST1")
    fresh_scripted_llm.clear_requests()
    chat_api.post(
        f"/api/v1/knowledge-chat/{session['id']}",
        json={"query": "And since when?", "stream": False},
    )
    sent = fresh_scripted_llm.requests("/v1/chat/completions")[-1].body
    contents = json.dumps(sent)
    assert QUESTION in contents and ANSWER in contents  # the history went with the follow-up


def test_llm_down_streams_an_error_and_keeps_the_question(
    chat_api: httpx.Client,
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    fresh_scripted_llm.set_rules(
        [
            {
                "match": {"user": {"contains": "Passages:"}},
                "reply": {"content": "x"},
                "fault": {"status": 500},
            }
        ],
    )
    kb = create_kb(http)
    session = chat_api.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()
    events = _sse(chat_api, session["id"], {"query": "Anything?"})
    assert events[-1][0] == "error" and events[-1][1]["code"] == "llm_unavailable"
    stored = chat_api.get(f"/api/v1/sessions/{session['id']}").json()["messages"]
    assert stored[0]["content"] == "Anything?" and stored[1]["completed"] is False


def test_bad_chat_requests(chat_api: httpx.Client, http: httpx.Client) -> None:
    kb = create_kb(http)
    session = chat_api.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()
    url = f"/api/v1/knowledge-chat/{session['id']}"
    assert chat_api.post(url, json={"query": ""}).status_code == 422
    assert chat_api.post(url, json={"query": "x" * 5000}).status_code == 422
    assert chat_api.post(url, json={"query": "x", "kb_ids": [str(uuid.uuid4())]}).status_code == 404
    missing = chat_api.post(f"/api/v1/knowledge-chat/{uuid.uuid4()}", json={"query": "x"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    empty = chat_api.post("/api/v1/sessions", json={}).json()
    no_kb = chat_api.post(f"/api/v1/knowledge-chat/{empty['id']}", json={"query": "x"})
    assert no_kb.status_code == 422


def test_stream_closed_by_the_client_keeps_the_partial_answer(
    chat_api: httpx.Client,
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    fresh_scripted_llm.set_rules(
        [
            {
                "match": {"user": {"contains": "Passages:"}},
                "reply": {"content": ANSWER},
                "fault": {"delay_s": 1.0},
            }
        ],
    )
    kb = create_kb(http)
    session = chat_api.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()
    url = f"/api/v1/knowledge-chat/{session['id']}"
    with chat_api.stream("POST", url, json={"query": QUESTION}) as response:
        for line in response.iter_lines():
            if line.startswith("event: references"):
                break  # the client goes away before the answer
    deadline = time.monotonic() + DISCONNECT_TIMEOUT_S
    while len(messages := chat_api.get(f"/api/v1/sessions/{session['id']}").json()["messages"]) < 2:
        assert time.monotonic() < deadline, "the interrupted turn was never stored"
        time.sleep(0.2)
    assert messages[0]["content"] == QUESTION
    assert messages[1]["role"] == "assistant" and messages[1]["completed"] is False
