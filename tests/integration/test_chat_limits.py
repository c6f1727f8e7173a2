"""Chat lists are bounded, over real HTTP: sessions and a session's messages come a page at a
time, and a request's `kb_ids` (session) and `knowledge_ids` (chat) are capped (422 above)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.models import Capability
from graphrag.db.engine import session_scope
from graphrag.db.enums import MessageRole
from graphrag.db.models import Message
from graphrag.settings import Settings
from tests.support.auth_helpers import bearer, make_key

pytestmark = pytest.mark.integration

V1 = "/api/v1"


@pytest.fixture()
def tenant_client(
    api_url: str, settings: Settings, session_factory: sessionmaker[Session]
) -> Iterator[httpx.Client]:
    """A client of a tenant of its own (nothing else lists in it)."""
    tenant = f"tenant-{uuid.uuid4().hex[:10]}"
    key = make_key(session_factory, settings, tenant, [Capability.ADMIN]).key
    with httpx.Client(base_url=api_url, timeout=30.0, headers=bearer(key)) as client:
        yield client


def _invalid(response: httpx.Response) -> None:
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_input"


def test_sessions_list_by_page(tenant_client: httpx.Client, settings: Settings) -> None:
    made = [
        tenant_client.post(f"{V1}/sessions", json={"title": f"s{n}"}).json()["id"] for n in range(3)
    ]
    first = tenant_client.get(f"{V1}/sessions", params={"page_size": 2}).json()
    assert first["total"] == 3 and first["page"] == 1 and len(first["items"]) == 2
    second = tenant_client.get(f"{V1}/sessions", params={"page_size": 2, "page": 2}).json()
    assert len(second["items"]) == 1
    assert {s["id"] for s in first["items"] + second["items"]} == set(made)
    huge = tenant_client.get(f"{V1}/sessions", params={"page_size": 10**6}).json()
    assert huge["page_size"] == settings.api.max_page_size and len(huge["items"]) == 3
    assert tenant_client.get(f"{V1}/sessions").json()["page_size"] == settings.api.default_page_size


def test_session_messages_by_page(
    tenant_client: httpx.Client, settings: Settings, session_factory: sessionmaker[Session]
) -> None:
    session_id = tenant_client.post(f"{V1}/sessions", json={}).json()["id"]
    start = datetime.now(UTC)
    with session_scope(session_factory) as db:
        for n in range(5):
            role = MessageRole.USER if n % 2 == 0 else MessageRole.ASSISTANT
            db.add(
                Message(
                    id=uuid.uuid4(),
                    session_id=uuid.UUID(session_id),
                    role=role,
                    content=f"message {n}",
                    completed=True,
                    created_at=start + timedelta(seconds=n),
                )
            )

    def page(**params: int) -> dict[str, Any]:
        answer = tenant_client.get(f"{V1}/sessions/{session_id}", params=params)
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    whole = page()
    assert whole["messages_total"] == 5 and whole["page_size"] == settings.chat.messages_page_size
    contents = [m["content"] for m in whole["messages"]]
    assert contents == [f"message {n}" for n in range(5)]  # oldest first
    pages = [page(page_size=2, page=n)["messages"] for n in (1, 2, 3, 4)]
    assert [[m["content"] for m in p] for p in pages] == [
        ["message 0", "message 1"],
        ["message 2", "message 3"],
        ["message 4"],
        [],
    ]
    capped = page(page_size=10**6)
    assert capped["page_size"] == settings.chat.max_messages_page_size


def test_session_kb_ids_are_capped(tenant_client: httpx.Client, settings: Settings) -> None:
    too_many = [str(uuid.uuid4()) for _ in range(settings.chat.max_kbs + 1)]
    _invalid(tenant_client.post(f"{V1}/sessions", json={"kb_ids": too_many}))
    kb = tenant_client.post(f"{V1}/knowledge-bases", json={"name": "caps"}).json()["id"]
    at_cap = [kb] * settings.chat.max_kbs
    made = tenant_client.post(f"{V1}/sessions", json={"kb_ids": at_cap})
    assert made.status_code == 201, made.text


@pytest.mark.parametrize("mode", ["knowledge-chat", "agent-chat"])
def test_chat_knowledge_ids_are_capped(
    tenant_client: httpx.Client, settings: Settings, mode: str
) -> None:
    kb = tenant_client.post(f"{V1}/knowledge-bases", json={"name": "caps"}).json()["id"]
    session_id = tenant_client.post(f"{V1}/sessions", json={"kb_ids": [kb]}).json()["id"]
    ids = [str(uuid.uuid4()) for _ in range(settings.chat.max_knowledge_ids + 1)]
    question = {"query": "anything?", "knowledge_ids": ids, "stream": False}
    _invalid(tenant_client.post(f"{V1}/{mode}/{session_id}", json=question))
    stored = tenant_client.get(f"{V1}/sessions/{session_id}").json()
    assert stored["messages_total"] == 0  # refused before anything was stored
