"""Tenant isolation on every route of the app: tenant A, even with every capability, cannot
list, read, search, graph-search, chat with, change or delete anything of tenant B.

The test is parametrized by the app's own route table: a route without a case here fails, so
a new route cannot ship without saying how it keeps tenants apart. After each attempt, B's
knowledge base, document, chunks, graph, chat session and keys are checked intact.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi.routing import iter_route_contexts
from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from api.app import create_app
from graphrag.auth.models import Capability
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.auth_helpers import bearer, make_key
from tests.support.graph_data import add_document, drop_kb_graph, graph

pytestmark = pytest.mark.integration

V1 = "/api/v1"
B_TEXT = "Ada Moreau founded Harbor Logistics in Lyon."
B_FACT = "Ada Moreau drinks green tea every morning."
B_CORE = "B-PROFILE: prefers answers in Portuguese."
GRAPH_ON = {"indexing": {"graph_enabled": True}, "extract_config": {"enabled": True}}


@dataclass
class World:
    """Tenant B's data, and one client per tenant (each with an all-capability key)."""

    a: httpx.Client
    b: httpx.Client
    kb_id: str
    kb_name: str
    doc_id: str
    chunk_ids: list[str]
    session_id: str
    key_id: str
    fact_id: str

    def ids(self) -> list[str]:
        return [
            self.kb_id,
            self.doc_id,
            self.session_id,
            self.key_id,
            self.fact_id,
            *self.chunk_ids,
        ]

    def contents(self) -> list[str]:
        return [self.kb_name, B_TEXT, B_FACT, B_CORE, "b-chat", "b-extra"]


def _routes() -> list[str]:
    app = create_app(Settings())
    return sorted(
        f"{method} {context.path}"
        for context in iter_route_contexts(app.routes)
        for method in context.methods or ()
        if method != "HEAD"
    )


@pytest.fixture(scope="module")
def world(
    api_url: str,
    settings: Settings,
    session_factory: sessionmaker[Session],
    neo4j_driver: Driver,
) -> Iterator[World]:
    caps = list(Capability)
    a_key = make_key(session_factory, settings, f"iso-a-{uuid.uuid4().hex[:8]}", caps).key
    b_tenant = f"iso-b-{uuid.uuid4().hex[:8]}"
    b_key = make_key(session_factory, settings, b_tenant, caps).key
    with (
        httpx.Client(base_url=api_url, timeout=30.0, headers=bearer(a_key)) as a,
        httpx.Client(base_url=api_url, timeout=30.0, headers=bearer(b_key)) as b,
    ):
        name = f"b-base-{uuid.uuid4().hex[:8]}"
        kb = b.post(f"{V1}/knowledge-bases", json={"name": name, **GRAPH_ON})
        assert kb.status_code == 201, kb.text
        kb_id = uuid.UUID(kb.json()["id"])
        doc_id, chunk_ids = add_document(session_factory, kb_id, [B_TEXT])
        store = Neo4jGraphStore(neo4j_driver, settings.neo4j)
        b_graph = graph(["Ada Moreau", "Lyon"], [("Ada Moreau", "founded in", "Lyon")])
        store.write_chunk_graph(kb_id, doc_id, chunk_ids[0], b_graph)
        chat = b.post(f"{V1}/sessions", json={"title": "b-chat", "kb_ids": [str(kb_id)]})
        assert chat.status_code == 201, chat.text
        key = b.post(f"{V1}/admin/api-keys", json={"name": "b-extra", "capabilities": ["read"]})
        assert key.status_code == 201, key.text
        fact = b.post(f"{V1}/memory/facts", json={"text": B_FACT})
        assert fact.status_code == 201, fact.text
        core = b.put(f"{V1}/memory/core/profile", json={"text": B_CORE})
        assert core.status_code == 200, core.text
        yield World(
            a=a,
            b=b,
            kb_id=str(kb_id),
            kb_name=name,
            doc_id=str(doc_id),
            chunk_ids=[str(c) for c in chunk_ids],
            session_id=chat.json()["id"],
            key_id=key.json()["id"],
            fact_id=fact.json()["id"],
        )
        assert b.delete(f"{V1}/memory/facts/{fact.json()['id']}").status_code == 204
        drop_kb_graph(store, neo4j_driver, kb_id)


def _not_found(response: httpx.Response, w: World) -> None:
    assert response.status_code == 404, response.text
    assert response.json()["error"]["code"] == "not_found"
    _no_leak(response, w, ids=False)  # the id A sent may be echoed back


def _no_leak(response: httpx.Response, w: World, *, ids: bool = True) -> None:
    secrets = w.contents() + (w.ids() if ids else [])
    assert not any(secret in response.text for secret in secrets), response.text


def _missing(method: str, path: str, **kwargs: Any) -> Callable[[World], None]:
    """A case where A names one of B's ids: `path` is formatted with B's World fields."""

    def attempt(w: World) -> None:
        url = path.format(
            kb=w.kb_id,
            doc=w.doc_id,
            chunk=w.chunk_ids[0],
            session=w.session_id,
            key=w.key_id,
            fact=w.fact_id,
        )
        _not_found(w.a.request(method, url, **kwargs), w)

    return attempt


def _open_without_tenant_data(method: str, path: str, **kwargs: Any) -> Callable[[World], None]:
    """A route that holds no tenant data: it answers A, with nothing of B in it."""

    def attempt(w: World) -> None:
        response = w.a.request(method, path, **kwargs)
        assert response.status_code == 200, response.text
        _no_leak(response, w)

    return attempt


def _create_kb(w: World) -> None:
    mine = w.a.post(f"{V1}/knowledge-bases", json={"name": w.kb_name})
    assert mine.status_code == 201, mine.text
    assert mine.json()["id"] != w.kb_id


def _list_kbs(w: World) -> None:
    listed = w.a.get(f"{V1}/knowledge-bases")
    assert listed.status_code == 200
    _no_leak(listed, w)


def _create_session(w: World) -> None:
    _not_found(w.a.post(f"{V1}/sessions", json={"kb_ids": [w.kb_id]}), w)


def _list_sessions(w: World) -> None:
    listed = w.a.get(f"{V1}/sessions")
    assert listed.status_code == 200
    _no_leak(listed, w)


def _chat(mode: str) -> Callable[[World], None]:
    def attempt(w: World) -> None:
        question = {"query": "Who founded Harbor Logistics?", "stream": False}
        _not_found(w.a.post(f"{V1}/{mode}/{w.session_id}", json=question), w)
        own = w.a.post(f"{V1}/sessions", json={"title": "a-chat"})
        assert own.status_code == 201, own.text
        scoped = {**question, "kb_ids": [w.kb_id]}
        _not_found(w.a.post(f"{V1}/{mode}/{own.json()['id']}", json=scoped), w)

    return attempt


def _add_fact(w: World) -> None:
    # The same text in another tenant is not a duplicate of B's fact.
    mine = w.a.post(f"{V1}/memory/facts", json={"text": B_FACT})
    assert mine.status_code == 201, mine.text
    assert mine.json()["id"] != w.fact_id
    assert w.a.delete(f"{V1}/memory/facts/{mine.json()['id']}").status_code == 204


def _answers_without_b(method: str, path: str, **kwargs: Any) -> Callable[[World], None]:
    """A route over A's own data (any status but a server error), with nothing of B in it."""

    def attempt(w: World) -> None:
        response = w.a.request(method, path, **kwargs)
        assert response.status_code < 500, response.text
        _no_leak(response, w)

    return attempt


def _write_core(w: World) -> None:
    mine = w.a.put(f"{V1}/memory/core/profile", json={"text": "A's own profile"})
    assert mine.status_code == 200, mine.text
    assert w.a.delete(f"{V1}/memory/core/profile").status_code == 204


def _create_key(w: World) -> None:
    made = w.a.post(f"{V1}/admin/api-keys", json={"name": "a", "capabilities": ["read"]})
    assert made.status_code == 201
    assert made.json()["key"] and w.b.get(f"{V1}/knowledge-bases").status_code == 200
    listed = w.b.get(f"{V1}/admin/api-keys").json()
    assert made.json()["id"] not in {k["id"] for k in listed}


def _list_keys(w: World) -> None:
    listed = w.a.get(f"{V1}/admin/api-keys")
    assert listed.status_code == 200
    _no_leak(listed, w)


def _list_models(w: World) -> None:
    listed = w.a.get("/v1/models")
    assert listed.status_code == 200, listed.text
    _no_leak(listed, w)


def _complete(w: World) -> None:
    question = [{"role": "user", "content": "Who founded Harbor Logistics?"}]
    for model in (w.kb_id, f"{w.kb_id}+{w.kb_id}"):
        answer = w.a.post("/v1/chat/completions", json={"model": model, "messages": question})
        assert answer.status_code == 404, answer.text
        assert answer.json()["error"]["code"] == "model_not_found"
        _no_leak(answer, w, ids=False)
    # By name, A reaches only a base of its own (another case may have made one of that name).
    by_name = {"model": f"kb/{w.kb_name}", "messages": question}
    answer = w.a.post("/v1/chat/completions", json=by_name)
    assert answer.status_code in (200, 404), answer.text
    assert not any(secret in answer.text for secret in [B_TEXT, *w.ids()]), answer.text


FILE = {"files": {"file": ("x.txt", b"A's text about Lyon.", "text/plain")}}
OTHER_ID = str(uuid.uuid4())  # a set or run id: B's base is not found first
CASES: dict[str, Callable[[World], None]] = {
    "GET /openapi.json": _open_without_tenant_data("GET", "/openapi.json"),
    "GET /docs": _open_without_tenant_data("GET", "/docs"),
    "GET /docs/oauth2-redirect": _open_without_tenant_data("GET", "/docs/oauth2-redirect"),
    "GET /redoc": _open_without_tenant_data("GET", "/redoc"),
    "GET /health": _open_without_tenant_data("GET", "/health"),
    "GET /": _open_without_tenant_data("GET", "/"),
    "GET /api/v1/me": _open_without_tenant_data("GET", f"{V1}/me"),
    "GET /api/v1/chunks/{chunk_id}": _missing("GET", V1 + "/chunks/{chunk}"),
    "PATCH /api/v1/chunks/{chunk_id}": _missing(
        "PATCH", V1 + "/chunks/{chunk}", json={"enabled": False}
    ),
    "GET /api/v1/system": _open_without_tenant_data("GET", f"{V1}/system"),
    "GET /metrics": _open_without_tenant_data("GET", "/metrics"),
    "POST /api/v1/knowledge-bases": _create_kb,
    "GET /api/v1/knowledge-bases": _list_kbs,
    "GET /api/v1/knowledge-bases/{kb_id}": _missing("GET", V1 + "/knowledge-bases/{kb}"),
    "PATCH /api/v1/knowledge-bases/{kb_id}": _missing(
        "PATCH", V1 + "/knowledge-bases/{kb}", json={"name": "taken"}
    ),
    "DELETE /api/v1/knowledge-bases/{kb_id}": _missing("DELETE", V1 + "/knowledge-bases/{kb}"),
    "GET /api/v1/knowledge-bases/{kb_id}/deletion": _missing(
        "GET", V1 + "/knowledge-bases/{kb}/deletion"
    ),
    "POST /api/v1/knowledge-bases/{kb_id}/eval-sets": _missing(
        "POST",
        V1 + "/knowledge-bases/{kb}/eval-sets",
        files={"file": ("set.jsonl", b'{"question": "Where is Lyon?"}', "application/jsonl")},
    ),
    "GET /api/v1/knowledge-bases/{kb_id}/eval-sets": _missing(
        "GET", V1 + "/knowledge-bases/{kb}/eval-sets"
    ),
    "GET /api/v1/knowledge-bases/{kb_id}/eval-sets/{set_id}": _missing(
        "GET", V1 + "/knowledge-bases/{kb}/eval-sets/" + OTHER_ID
    ),
    "DELETE /api/v1/knowledge-bases/{kb_id}/eval-sets/{set_id}": _missing(
        "DELETE", V1 + "/knowledge-bases/{kb}/eval-sets/" + OTHER_ID
    ),
    "POST /api/v1/knowledge-bases/{kb_id}/eval-runs": _missing(
        "POST", V1 + "/knowledge-bases/{kb}/eval-runs", json={"eval_set_id": OTHER_ID}
    ),
    "GET /api/v1/knowledge-bases/{kb_id}/eval-runs": _missing(
        "GET", V1 + "/knowledge-bases/{kb}/eval-runs"
    ),
    "GET /api/v1/knowledge-bases/{kb_id}/eval-runs/{run_id}": _missing(
        "GET", V1 + "/knowledge-bases/{kb}/eval-runs/" + OTHER_ID
    ),
    "GET /api/v1/knowledge-bases/{kb_id}/eval-runs/{run_id}/questions": _missing(
        "GET", V1 + "/knowledge-bases/{kb}/eval-runs/" + OTHER_ID + "/questions"
    ),
    "POST /api/v1/knowledge-bases/{kb_id}/eval-runs/{run_id}/cancel": _missing(
        "POST", V1 + "/knowledge-bases/{kb}/eval-runs/" + OTHER_ID + "/cancel"
    ),
    "GET /api/v1/knowledge-bases/{kb_id}/eval-runs/{a}/compare/{b}": _missing(
        "GET", V1 + "/knowledge-bases/{kb}/eval-runs/" + OTHER_ID + "/compare/" + OTHER_ID
    ),
    "POST /api/v1/knowledge-bases/{kb_id}/knowledge/file": _missing(
        "POST", V1 + "/knowledge-bases/{kb}/knowledge/file", **FILE
    ),
    "POST /api/v1/knowledge-bases/{kb_id}/knowledge/files": _missing(
        "POST",
        V1 + "/knowledge-bases/{kb}/knowledge/files",
        files=[("files", ("x.txt", b"A's text about Lyon.", "text/plain"))],
    ),
    "POST /api/v1/knowledge-bases/{kb_id}/knowledge/url": _missing(
        "POST", V1 + "/knowledge-bases/{kb}/knowledge/url", json={"url": "http://127.0.0.1:9/x"}
    ),
    "POST /api/v1/knowledge-bases/{kb_id}/knowledge/text": _missing(
        "POST", V1 + "/knowledge-bases/{kb}/knowledge/text", json={"title": "t", "content": "c"}
    ),
    "GET /api/v1/knowledge-bases/{kb_id}/knowledge": _missing(
        "GET", V1 + "/knowledge-bases/{kb}/knowledge"
    ),
    "GET /api/v1/knowledge/{knowledge_id}": _missing("GET", V1 + "/knowledge/{doc}"),
    "PATCH /api/v1/knowledge/{knowledge_id}": _missing(
        "PATCH", V1 + "/knowledge/{doc}", json={"extract_override": {"enabled": False}}
    ),
    "GET /api/v1/knowledge/{knowledge_id}/stages": _missing("GET", V1 + "/knowledge/{doc}/stages"),
    "GET /api/v1/knowledge/{knowledge_id}/chunks": _missing("GET", V1 + "/knowledge/{doc}/chunks"),
    "POST /api/v1/knowledge/{knowledge_id}/reparse": _missing(
        "POST", V1 + "/knowledge/{doc}/reparse"
    ),
    "POST /api/v1/knowledge/{knowledge_id}/cancel": _missing(
        "POST", V1 + "/knowledge/{doc}/cancel"
    ),
    "DELETE /api/v1/knowledge/{knowledge_id}": _missing("DELETE", V1 + "/knowledge/{doc}"),
    "POST /api/v1/knowledge-bases/{kb_id}/graph-search": _missing(
        "POST", V1 + "/knowledge-bases/{kb}/graph-search", json={"entity": "Ada"}
    ),
    "POST /api/v1/knowledge-bases/{kb_id}/graph-view": _missing(
        "POST", V1 + "/knowledge-bases/{kb}/graph-view", json={"entity": "Ada"}
    ),
    "GET /api/v1/knowledge-bases/{kb_id}/entities/{key}/resolution": _missing(
        "GET", V1 + "/knowledge-bases/{kb}/entities/ada moreau/resolution"
    ),
    "POST /api/v1/knowledge-bases/{kb_id}/entities/{key}/merge": _missing(
        "POST", V1 + "/knowledge-bases/{kb}/entities/ada moreau/merge", json={"other": "Lyon"}
    ),
    "POST /api/v1/knowledge-bases/{kb_id}/entities/{key}/split": _missing(
        "POST", V1 + "/knowledge-bases/{kb}/entities/ada moreau/split", json={}
    ),
    "POST /api/v1/knowledge-bases/{kb_id}/search": _missing(
        "POST", V1 + "/knowledge-bases/{kb}/search", json={"query": "Ada Moreau"}
    ),
    "POST /api/v1/sessions": _create_session,
    "GET /api/v1/sessions": _list_sessions,
    "GET /api/v1/sessions/{session_id}": _missing("GET", V1 + "/sessions/{session}"),
    "PATCH /api/v1/sessions/{session_id}": _missing(
        "PATCH", V1 + "/sessions/{session}", json={"title": "taken"}
    ),
    "DELETE /api/v1/sessions/{session_id}": _missing("DELETE", V1 + "/sessions/{session}"),
    "POST /api/v1/knowledge-chat/{session_id}": _chat("knowledge-chat"),
    "POST /api/v1/agent-chat/{session_id}": _chat("agent-chat"),
    "GET /api/v1/memory/facts": _answers_without_b("GET", f"{V1}/memory/facts"),
    "POST /api/v1/memory/facts": _add_fact,
    "POST /api/v1/memory/facts/search": _answers_without_b(
        "POST", f"{V1}/memory/facts/search", json={"query": "green tea"}
    ),
    "GET /api/v1/memory/facts/{fact_id}": _missing("GET", V1 + "/memory/facts/{fact}"),
    "DELETE /api/v1/memory/facts/{fact_id}": _missing("DELETE", V1 + "/memory/facts/{fact}"),
    "GET /api/v1/memory/entities/{name}": _answers_without_b(
        "GET", f"{V1}/memory/entities/Ada Moreau"
    ),
    "GET /api/v1/memory/search": _answers_without_b(
        "GET", f"{V1}/memory/search", params={"q": "Ada Moreau green tea"}
    ),
    "GET /api/v1/memory/core": _answers_without_b("GET", f"{V1}/memory/core"),
    "GET /api/v1/interactions": _missing("GET", V1 + "/interactions?kb_id={kb}"),
    "PUT /api/v1/memory/core/{section}": _write_core,
    "DELETE /api/v1/memory/core/{section}": _missing("DELETE", V1 + "/memory/core/profile"),
    "POST /api/v1/memory/sessions/{session_id}/close": _missing(
        "POST", V1 + "/memory/sessions/{session}/close", json={}
    ),
    "GET /api/v1/memory/sessions/{session_id}/close-report": _missing(
        "GET", V1 + "/memory/sessions/{session}/close-report"
    ),
    "POST /api/v1/initialization/extract/text-relation": _open_without_tenant_data(
        "POST", f"{V1}/initialization/extract/text-relation", json={"text": "t", "tags": ["x"]}
    ),
    "POST /api/v1/initialization/extract/fabri-text": _open_without_tenant_data(
        "POST", f"{V1}/initialization/extract/fabri-text", json={}
    ),
    "POST /api/v1/initialization/extract/fabri-tag": _open_without_tenant_data(
        "POST", f"{V1}/initialization/extract/fabri-tag", json={"text": "t"}
    ),
    "POST /api/v1/admin/api-keys": _create_key,
    "GET /api/v1/admin/api-keys": _list_keys,
    "DELETE /api/v1/admin/api-keys/{key_id}": _missing("DELETE", V1 + "/admin/api-keys/{key}"),
    "GET /v1/models": _list_models,
    "POST /v1/chat/completions": _complete,
}


def _b_is_intact(w: World) -> None:
    b = w.b
    kb = b.get(f"{V1}/knowledge-bases/{w.kb_id}")
    assert kb.status_code == 200 and kb.json()["name"] == w.kb_name, kb.text
    assert [k["id"] for k in b.get(f"{V1}/knowledge-bases").json()] == [w.kb_id]
    doc = b.get(f"{V1}/knowledge/{w.doc_id}").json()
    assert doc["parse_status"] == "completed", doc
    chunks = b.get(f"{V1}/knowledge/{w.doc_id}/chunks").json()
    assert [c["id"] for c in chunks["items"]] == w.chunk_ids
    found = b.post(f"{V1}/knowledge-bases/{w.kb_id}/graph-search", json={"entity": "Ada"}).json()
    assert [e["name"] for e in found["entities"] if e["matched"]] == ["Ada Moreau"]
    assert [r["type"] for r in found["relations"]] == ["founded in"]
    hits = b.post(f"{V1}/knowledge-bases/{w.kb_id}/search", json={"query": "Harbor Logistics"})
    assert [h["chunk_id"] for h in hits.json()["hits"]] == w.chunk_ids, hits.text
    chat = b.get(f"{V1}/sessions/{w.session_id}")
    assert chat.status_code == 200 and chat.json()["title"] == "b-chat"
    keys = b.get(f"{V1}/admin/api-keys").json()
    assert w.key_id in {k["id"] for k in keys} and all(k["revoked_at"] is None for k in keys)
    assert b.get(f"{V1}/memory/facts/{w.fact_id}").json()["text"] == B_FACT
    core = b.get(f"{V1}/memory/core").json()["sections"]
    assert [(c["section"], c["text"]) for c in core] == [("profile", B_CORE)]


@pytest.mark.parametrize("route", _routes())
def test_tenant_a_cannot_reach_tenant_b(
    route: str, world: World, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    attempt = CASES.get(route)
    assert attempt is not None, f"{route} has no tenant-isolation case in this test"
    attempt(world)
    _b_is_intact(world)


def test_every_case_names_a_real_route() -> None:
    assert set(CASES) - set(_routes()) == set()
