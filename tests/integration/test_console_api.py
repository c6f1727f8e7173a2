"""What the web console needs from the API: its files at `/`, the caller's identity, one chunk
by id; and that serving the console changes nothing for the API's own paths."""

from __future__ import annotations

import uuid

import httpx
import pytest
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.support.api_helpers import all_chunks, create_kb, upload, wait_terminal
from tests.support.auth_helpers import bearer, make_key
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration


def test_console_page_and_assets_are_served_without_a_key(api_url: str) -> None:
    with httpx.Client(base_url=api_url) as anonymous:
        page = anonymous.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert '<script type="module" src="/console/js/app.js">' in page.text
        policy = page.headers["content-security-policy"]
        assert "default-src 'self'" in policy
        # The same page through the static mount carries the same policy.
        same_page = anonymous.get("/console/index.html")
        assert same_page.status_code == 200 and same_page.text == page.text
        assert same_page.headers["content-security-policy"] == policy
        script = anonymous.get("/console/js/app.js")
        assert script.status_code == 200
        assert "javascript" in script.headers["content-type"]
        assert anonymous.get("/console/console.css").status_code == 200
        assert anonymous.get("/console/../pyproject.toml").status_code == 404
        # The API's own paths keep their JSON errors.
        missing = anonymous.get("/api/v1/no-such-route")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
        assert anonymous.get("/api/v1/knowledge-bases").status_code == 401


def test_me_reports_tenant_and_effective_capabilities(
    api_url: str, settings: Settings, session_factory: sessionmaker[Session]
) -> None:
    tenant = f"me-{uuid.uuid4().hex[:8]}"
    admin = make_key(session_factory, settings, tenant, [Capability.ADMIN])
    models = make_key(session_factory, settings, tenant, [Capability.MANAGE_MODELS])
    with httpx.Client(base_url=api_url) as client:
        me = client.get("/api/v1/me", headers=bearer(admin.key)).json()
        assert me == {
            "tenant_id": str(admin.tenant_id),
            "key_id": str(admin.id),
            "capabilities": ["read", "write", "manage_models", "admin"],
        }
        narrow = client.get("/api/v1/me", headers=bearer(models.key)).json()
        assert narrow["capabilities"] == ["manage_models"]
        assert narrow["tenant_id"] == str(admin.tenant_id)
        refused = client.get("/api/v1/me", headers=bearer(admin.key + "x"))
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"
        assert client.get("/api/v1/me").status_code == 401


def test_chunk_by_id_follows_the_current_version(http: httpx.Client, worker: WorkerProcess) -> None:
    kb = create_kb(http)
    text = f"First paragraph about herons.\n\nSecond paragraph about {uuid.uuid4()}."
    doc = wait_terminal(http, upload(http, kb["id"], "herons.md", text.encode()).json()["id"])
    assert doc["parse_status"] == "completed", doc
    listed = all_chunks(http, doc["id"])
    one = http.get(f"/api/v1/chunks/{listed[0]['id']}")
    assert one.status_code == 200 and one.json() == listed[0]

    assert http.post(f"/api/v1/knowledge/{doc['id']}/reparse").status_code == 202
    wait_terminal(http, doc["id"])
    stale = http.get(f"/api/v1/chunks/{listed[0]['id']}")
    assert stale.status_code == 404 and stale.json()["error"]["code"] == "not_found"
    assert http.get(f"/api/v1/chunks/{uuid.uuid4()}").status_code == 404
    assert http.get("/api/v1/chunks/not-a-uuid").status_code == 422
