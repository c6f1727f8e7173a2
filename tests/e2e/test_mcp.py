"""The MCP server driven by the official MCP Python client, over streamable HTTP (`/mcp` of the
real API) and over stdio (a spawned `graphrag mcp --key ...`): every tool end to end
through the real worker and Neo4j, tenant isolation, and a missing capability refused."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult
from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb
from tests.support.auth_helpers import bearer, make_key
from tests.support.graph_helpers import kb_graph_rule, remove_label
from tests.support.services import worker_environment
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

TOOLS = {
    "list_knowledge_bases",
    "search",
    "graph_search",
    "ask",
    "add_text_document",
    "document_status",
    "start_evaluation",
    "evaluation_run",
}
TRANSPORTS = ["http", "stdio"]
WAIT_S = 120.0
POLL_S = 0.25
QUESTION = "Who founded the Quillon ferry company?"
ANSWER = "Quillon Ferries was founded by Maren Tovik [1]."
GRAPH_ON = {"indexing": {"graph_enabled": True}, "extract_config": {"enabled": True}}

Connect = Callable[[str], AbstractAsyncContextManager[Client]]


@dataclass
class World:
    a_key: str
    a_read_key: str
    b_key: str
    a_kb: dict[str, Any]
    b_kb: dict[str, Any]
    b_doc: str


@pytest.fixture(scope="module")
def world(
    api_url: str,
    settings: Settings,
    session_factory: sessionmaker[Session],
    worker: WorkerProcess,
    neo4j_driver: Driver,
) -> Iterator[World]:
    a_tenant, b_tenant = (f"mcp-{side}-{uuid.uuid4().hex[:8]}" for side in "ab")
    a_key = make_key(session_factory, settings, a_tenant, [Capability.READ, Capability.WRITE])
    a_read = make_key(session_factory, settings, a_tenant, [Capability.READ])
    b_key = make_key(session_factory, settings, b_tenant, list(Capability))
    with (
        httpx.Client(base_url=api_url, timeout=60.0, headers=bearer(a_key.key)) as a,
        httpx.Client(base_url=api_url, timeout=60.0, headers=bearer(b_key.key)) as b,
    ):
        a_kb, b_kb = create_kb(a, **GRAPH_ON), create_kb(b, **GRAPH_ON)
        b_doc = b.post(
            f"/api/v1/knowledge-bases/{b_kb['id']}/knowledge/text",
            json={"title": "b-secret", "content": "Quillon Ferries belongs to tenant B."},
        )
        assert b_doc.status_code == 202, b_doc.text
        yield World(a_key.key, a_read.key, b_key.key, a_kb, b_kb, b_doc.json()["id"])
    for kb in (a_kb, b_kb):
        remove_label(neo4j_driver, kb["id"])


@pytest.fixture(scope="module")
def connect(api_url: str, settings_env: dict[str, str]) -> Callable[[str], Connect]:
    """`connect(transport)(key)`: an MCP client session as `key`, over that transport."""

    @asynccontextmanager
    async def over_http(key: str) -> AsyncIterator[Client]:
        async with (
            create_mcp_http_client(headers=bearer(key)) as http,
            Client(streamable_http_client(f"{api_url}/mcp", http_client=http)) as client,
        ):
            yield client

    @asynccontextmanager
    async def over_stdio(key: str) -> AsyncIterator[Client]:
        command = Path(sys.executable).parent / "graphrag"
        env = {**worker_environment(settings_env), "ENVIRONMENT": "test"}
        server = StdioServerParameters(command=str(command), args=["mcp", "--key", key], env=env)
        async with Client(server) as client:
            yield client

    def pick(transport: str) -> Connect:
        return over_http if transport == "http" else over_stdio

    return pick


def _run(connect: Connect, key: str, steps: Callable[[Client], Awaitable[None]]) -> None:
    async def main() -> None:
        async with connect(key) as client:
            await steps(client)

    anyio.run(main)


def _ok(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


def _refused(result: CallToolResult, code: str) -> None:
    assert result.is_error, result.structured_content
    text = " ".join(getattr(block, "text", "") for block in result.content)
    assert f"{code}:" in text, text


def _rules(marker: str) -> list[dict[str, Any]]:
    return [
        {
            "name": "entities",
            "match": {"user": {"contains": "list the named things"}},
            "reply": {"content": json.dumps(["Quillon Ferries"])},
        },
        {
            "name": "answer",
            "match": {"user": {"contains": "Passages:"}},
            "reply": {"content": ANSWER},
        },
        kb_graph_rule(
            marker,
            [
                {"name": "Quillon Ferries", "attributes": []},
                {"name": "Maren Tovik", "attributes": []},
            ],
            [{"node1": "Maren Tovik", "node2": "Quillon Ferries", "type": "founded"}],
        ),
    ]


async def _completed(client: Client, doc_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_S
    while True:
        status = _ok(await client.call_tool("document_status", {"document_id": doc_id}))
        if status["document"]["parse_status"] in {"completed", "failed", "cancelled"}:
            return dict(status)
        assert time.monotonic() < deadline, status
        await anyio.sleep(POLL_S)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_tool_end_to_end(
    transport: str,
    api_url: str,
    world: World,
    connect: Callable[[str], Connect],
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    marker = f"MARK{uuid.uuid4().hex[:8]}"
    fresh_scripted_llm.set_rules(_rules(marker), default={"content": "[]"})
    with httpx.Client(base_url=api_url, timeout=30.0, headers=bearer(world.a_key)) as a:
        kb = create_kb(a, **GRAPH_ON)
        question_set = json.dumps({"question": QUESTION}).encode()
        files = {"file": ("set.jsonl", question_set, "application/jsonl")}
        eval_set = a.post(f"/api/v1/knowledge-bases/{kb['id']}/eval-sets", files=files).json()

    async def steps(client: Client) -> None:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        read_only = {t.name for t in listed.tools if t.annotations and t.annotations.read_only_hint}
        assert "add_text_document" not in read_only and "search" in read_only
        assert "start_evaluation" not in read_only and "evaluation_run" in read_only

        bases = _ok(await client.call_tool("list_knowledge_bases", {}))["result"]
        mine = {b["id"]: b for b in bases}
        assert mine[kb["id"]]["graph_on"] is True and world.b_kb["id"] not in mine

        text = f"{marker}. Maren Tovik founded Quillon Ferries in the harbour town of Brevik."
        added = _ok(
            await client.call_tool(
                "add_text_document", {"kb": kb["name"], "title": marker, "content": text}
            )
        )
        status = await _completed(client, added["id"])
        assert status["document"]["parse_status"] == "completed", status
        assert status["document"]["relation_count"] == 1
        assert status["stages"]["knowledge_id"] == added["id"]

        found = _ok(await client.call_tool("search", {"kb": kb["id"], "query": "Quillon Ferries"}))
        assert added["id"] in {hit["knowledge_id"] for hit in found["hits"]}
        assert found["graph_used"] is True  # the query's entities were looked up in the graph

        graph = _ok(
            await client.call_tool("graph_search", {"kb": f"kb/{kb['name']}", "entity": "Maren"})
        )
        assert [e["name"] for e in graph["entities"] if e["matched"]] == ["Maren Tovik"]
        assert [r["type"] for r in graph["relations"]] == ["founded"]

        answer = _ok(await client.call_tool("ask", {"kb": kb["name"], "question": QUESTION}))
        assert answer["answer"] == ANSWER and answer["entities"] == ["Quillon Ferries"]
        assert answer["references"][0]["n"] == 1
        assert added["id"] in {r["knowledge_id"] for r in answer["references"]}

        started = _ok(
            await client.call_tool(
                "start_evaluation", {"kb": kb["name"], "eval_set_id": eval_set["id"]}
            )
        )
        assert started["status"] == "queued" and started["config"]["graph"] is True
        deadline = time.monotonic() + WAIT_S
        while (
            run := _ok(
                await client.call_tool("evaluation_run", {"kb": kb["id"], "run_id": started["id"]})
            )
        )["status"] in {"queued", "running"}:
            assert time.monotonic() < deadline, run
            await anyio.sleep(POLL_S)
        assert run["status"] == "succeeded" and run["metrics"]["overall"]["questions"] == 1

    _run(connect(transport), world.a_key, steps)
    remove_label(neo4j_driver, kb["id"])


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_another_tenant_sees_nothing(
    transport: str,
    world: World,
    connect: Callable[[str], Connect],
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    fresh_scripted_llm.set_rules(_rules("unused"))
    b_kb = world.b_kb

    async def steps(client: Client) -> None:
        bases = _ok(await client.call_tool("list_knowledge_bases", {}))["result"]
        assert b_kb["id"] not in {b["id"] for b in bases}
        for kb in (b_kb["id"], b_kb["name"], f"kb/{b_kb['name']}"):
            _refused(await client.call_tool("search", {"kb": kb, "query": "Quillon"}), "not_found")
            _refused(
                await client.call_tool("graph_search", {"kb": kb, "entity": "Quillon"}),
                "not_found",
            )
            _refused(await client.call_tool("ask", {"kb": kb, "question": QUESTION}), "not_found")
            _refused(
                await client.call_tool(
                    "add_text_document", {"kb": kb, "title": "x", "content": "A's text"}
                ),
                "not_found",
            )
        status = await client.call_tool("document_status", {"document_id": world.b_doc})
        _refused(status, "not_found")

    _run(connect(transport), world.a_key, steps)
    assert not [
        r for r in fresh_scripted_llm.requests("/v1/chat/completions") if "Passages:" in str(r.body)
    ]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_missing_capability_is_refused(
    transport: str, world: World, connect: Callable[[str], Connect]
) -> None:
    kb = world.a_kb["name"]

    async def steps(client: Client) -> None:
        assert _ok(await client.call_tool("list_knowledge_bases", {}))["result"]
        added = await client.call_tool(
            "add_text_document", {"kb": kb, "title": "ro", "content": "read-only text"}
        )
        _refused(added, "forbidden")
        _refused(await client.call_tool("ask", {"kb": kb, "question": QUESTION}), "forbidden")

    _run(connect(transport), world.a_read_key, steps)


def test_http_needs_a_valid_key(api_url: str) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    with httpx.Client(base_url=api_url, timeout=30.0) as http:
        for auth in ({}, bearer("grk_0000_unknown"), {"Authorization": "Basic eDp5"}):
            refused = http.post("/mcp", json=ping, headers={**headers, **auth})
            assert refused.status_code == 401, refused.text
            assert refused.json()["error"]["code"] == "unauthorized"
            assert refused.headers["www-authenticate"] == "Bearer"


def test_stdio_refuses_a_bad_key(settings_env: dict[str, str]) -> None:
    env = {**worker_environment(settings_env), "ENVIRONMENT": "test"}
    command = [str(Path(sys.executable).parent / "graphrag"), "mcp", "--key", "grk_0000_unknown"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "invalid or revoked API key" in done.stderr and done.stdout == ""
