"""Who may use which memory, over real HTTP: authentication comes before anything else (401
before 503 on every route), and a key acts for its own memory owner unless it has `admin`."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts
from sqlalchemy.orm import Session, sessionmaker

from api.app import create_app
from api.auth import public_access
from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.support.auth_helpers import bearer, make_key
from tests.support.http_server import ThreadedServer

pytestmark = pytest.mark.integration

R, W, A = Capability.READ, Capability.WRITE, Capability.ADMIN
MEMORY = "/api/v1/memory"
_PARAM = re.compile(r"\{([a-z_]+)\}")


def _code(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    code: str = response.json()["error"]["code"]
    return code


def _is_public(dependant: Dependant) -> bool:
    return any(sub.call is public_access or _is_public(sub) for sub in dependant.dependencies)


def _guarded_calls(app: FastAPI) -> list[tuple[str, str]]:
    """(method, concrete path) of every guarded route, path parameters filled with a uuid."""
    calls: list[tuple[str, str]] = []
    for context in iter_route_contexts(app.routes):
        if not isinstance(context.original_route, APIRoute) or _is_public(context.dependant):
            continue
        path = _PARAM.sub(str(uuid.uuid4()), context.path or "")
        calls.extend((method, path) for method in sorted(context.methods or ()))
    return calls


@pytest.fixture(scope="module")
def memory_off(settings: Settings) -> Iterator[tuple[FastAPI, str]]:
    """The API with the graph and so the archival memory off (a server without Neo4j)."""
    app = create_app(
        settings.model_copy(update={"neo4j": settings.neo4j.model_copy(update={"enable": False})})
    )
    with ThreadedServer(app) as url:
        yield app, url


def test_every_route_answers_401_before_503(memory_off: tuple[FastAPI, str]) -> None:
    app, url = memory_off
    calls = _guarded_calls(app)
    assert any(path.startswith(MEMORY) for _, path in calls)
    with httpx.Client(base_url=url, timeout=30.0) as client:
        for method, path in calls:
            response = client.request(method, path, json={})
            assert response.status_code == 401, f"{method} {path}: {response.text}"
            assert response.json()["error"]["code"] == "unauthorized"


def test_memory_off_answers_403_then_503_to_a_valid_key(
    memory_off: tuple[FastAPI, str], settings: Settings, session_factory: sessionmaker[Session]
) -> None:
    _, url = memory_off
    tenant = f"tenant-{uuid.uuid4().hex[:10]}"
    reader = bearer(make_key(session_factory, settings, tenant, [R]).key)
    writer = bearer(make_key(session_factory, settings, tenant, [R, W]).key)
    fact = {"text": "The user likes tea."}
    with httpx.Client(base_url=url, timeout=30.0) as client:
        assert _code(client.post(f"{MEMORY}/facts", json=fact, headers=reader), 403) == "forbidden"
        off = "archival_memory_disabled"
        assert _code(client.post(f"{MEMORY}/facts", json=fact, headers=writer), 503) == off
        assert _code(client.get(f"{MEMORY}/facts", headers=reader), 503) == off
        search = client.get(f"{MEMORY}/search", params={"q": "tea"}, headers=reader)
        assert _code(search, 503) == off


@pytest.fixture()
def tenant() -> str:
    return f"tenant-{uuid.uuid4().hex[:10]}"


def _core(client: httpx.Client, headers: dict[str, str], owner: str | None) -> httpx.Response:
    params = {"owner": owner} if owner is not None else {}
    return client.get(f"{MEMORY}/core", params=params, headers=headers)


def test_a_key_acts_for_its_own_owner_only(
    api_url: str, settings: Settings, session_factory: sessionmaker[Session], tenant: str
) -> None:
    admin = bearer(make_key(session_factory, settings, tenant, [A]).key)
    default = settings.memory.default_owner
    with httpx.Client(base_url=api_url, timeout=30.0) as client:
        made = client.post(
            "/api/v1/admin/api-keys",
            json={"name": "alice's", "capabilities": ["read", "write"], "owner": "alice"},
            headers=admin,
        )
        assert made.status_code == 201, made.text
        assert made.json()["owner"] == "alice"
        listed = client.get("/api/v1/admin/api-keys", headers=admin).json()
        assert {k["owner"] for k in listed} == {None, "alice"}
        alice = bearer(made.json()["key"])
        unbound = bearer(make_key(session_factory, settings, tenant, [R, W]).key)

        # Alice's key writes and reads Alice's memory, named or not.
        note = {"text": "Alice prefers short answers."}
        assert client.put(f"{MEMORY}/core/notes", json=note, headers=alice).status_code == 200
        for owner in (None, "alice", " alice "):
            body = _core(client, alice, owner).json()
            assert body["owner"] == "alice" and body["sections"][0]["text"] == note["text"]
        # Another owner is refused with a stable code, for reads, writes and searches alike.
        for owner in ("bob", default):
            assert _code(_core(client, alice, owner), 403) == "owner_forbidden"
        other = {"owner": "bob", "text": "Bob's secret."}
        assert _code(client.put(f"{MEMORY}/core/notes", json=other, headers=alice), 403) == (
            "owner_forbidden"
        )
        search = {"owner": "bob", "query": "secret"}
        assert _code(client.post(f"{MEMORY}/facts/search", json=search, headers=alice), 403) == (
            "owner_forbidden"
        )
        # A key bound to no owner acts for the default one; `admin` may act for anyone.
        assert _core(client, unbound, None).json()["owner"] == default
        assert _code(_core(client, unbound, "alice"), 403) == "owner_forbidden"
        assert _core(client, admin, "alice").json()["sections"][0]["text"] == note["text"]
        assert _core(client, admin, "bob").json()["sections"] == []


def test_sessions_and_chat_follow_the_key_owner(
    api_url: str, settings: Settings, session_factory: sessionmaker[Session], tenant: str
) -> None:
    admin = bearer(make_key(session_factory, settings, tenant, [A]).key)
    with httpx.Client(base_url=api_url, timeout=30.0) as client:
        made = client.post(
            "/api/v1/admin/api-keys",
            json={"name": "alice's", "capabilities": ["read", "write"], "owner": "alice"},
            headers=admin,
        )
        alice = bearer(made.json()["key"])
        own = client.post("/api/v1/sessions", json={"title": "mine"}, headers=alice)
        assert own.status_code == 201 and own.json()["owner"] == "alice"
        taken = client.post("/api/v1/sessions", json={"owner": "bob"}, headers=alice)
        assert _code(taken, 403) == "owner_forbidden"
        kb = client.post("/api/v1/knowledge-bases", json={"name": "owners"}, headers=admin)
        assert kb.status_code == 201, kb.text
        scope = {"owner": "bob", "kb_ids": [kb.json()["id"]]}
        bobs = client.post("/api/v1/sessions", json=scope, headers=admin)
        assert bobs.status_code == 201 and bobs.json()["owner"] == "bob"
        # Chatting in Bob's session would read and feed Bob's memory.
        question = {"query": "What do I like?", "stream": False}
        for mode in ("knowledge-chat", "agent-chat"):
            chat = client.post(f"/api/v1/{mode}/{bobs.json()['id']}", json=question, headers=alice)
            assert _code(chat, 403) == "owner_forbidden"
        stored = client.get(f"/api/v1/sessions/{bobs.json()['id']}", headers=admin).json()
        assert stored["messages"] == [] and stored["messages_total"] == 0


def _owner_key(client: httpx.Client, admin: dict[str, str], owner: str) -> dict[str, str]:
    made = client.post(
        "/api/v1/admin/api-keys",
        json={"name": f"{owner}'s", "capabilities": ["read", "write"], "owner": owner},
        headers=admin,
    )
    assert made.status_code == 201, made.text
    return bearer(made.json()["key"])


def _listed(client: httpx.Client, headers: dict[str, str]) -> set[str]:
    listed = client.get("/api/v1/sessions", headers=headers)
    assert listed.status_code == 200, listed.text
    return {s["id"] for s in listed.json()["items"]}


def test_a_session_is_reached_by_its_owners_keys_and_admin_only(
    api_url: str, settings: Settings, session_factory: sessionmaker[Session], tenant: str
) -> None:
    admin = bearer(make_key(session_factory, settings, tenant, [A]).key)
    with httpx.Client(base_url=api_url, timeout=30.0) as client:
        alice, bob = (_owner_key(client, admin, name) for name in ("alice", "bob"))
        made = client.post("/api/v1/sessions", json={"title": "alice's"}, headers=alice)
        assert made.status_code == 201, made.text
        url = f"/api/v1/sessions/{made.json()['id']}"
        close = f"{MEMORY}/sessions/{made.json()['id']}/close"
        bobs = client.post("/api/v1/sessions", json={}, headers=bob).json()["id"]

        # Bob's key neither lists nor reaches Alice's session: 403, as naming her would be.
        assert _listed(client, bob) == {bobs}
        refused = [
            client.get(url, headers=bob),
            client.patch(url, json={"title": "bob's now"}, headers=bob),
            client.delete(url, headers=bob),
            client.post(close, json={}, headers=bob),
        ]
        assert [_code(r, 403) for r in refused] == ["owner_forbidden"] * 4
        # Alice may not close her session into another owner's memory either.
        assert _code(client.post(close, json={"owner": "bob"}, headers=alice), 403) == (
            "owner_forbidden"
        )
        assert client.get(url, headers=alice).json()["title"] == "alice's"

        # An admin key sees and handles every owner's sessions of its tenant.
        assert _listed(client, admin) == {made.json()["id"], bobs}
        assert _listed(client, alice) == {made.json()["id"]}
        renamed = client.patch(url, json={"title": "renamed"}, headers=admin)
        assert renamed.status_code == 200 and renamed.json()["owner"] == "alice"
        assert _code(client.post(close, json={"owner": "bob"}, headers=admin), 422) == (
            "invalid_input"
        )
        queued = client.post(close, json={}, headers=admin)
        assert queued.status_code == 202 and queued.json()["owner"] == "alice", queued.text
        assert client.post(close, json={"owner": "alice"}, headers=alice).status_code == 202
        assert client.delete(url, headers=admin).status_code == 204
        assert _code(client.get(url, headers=alice), 404) == "not_found"
