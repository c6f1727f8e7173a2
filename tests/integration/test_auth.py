"""API keys over real HTTP: 401 without a valid key, 403 without the capability, revocation,
the key shown once and only its hash stored, and the `graphrag keys` command line."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.keys import hash_key
from graphrag.auth.models import Capability
from graphrag.db.models import ApiKey
from graphrag.settings import Settings
from tests.support.auth_helpers import bearer, make_key
from tests.support.services import ROOT, worker_environment

pytestmark = pytest.mark.integration

R, W, M, A = Capability.READ, Capability.WRITE, Capability.MANAGE_MODELS, Capability.ADMIN
CLI_TIMEOUT_S = 120
KBS = "/api/v1/knowledge-bases"
KEYS = "/api/v1/admin/api-keys"


def _tenant() -> str:
    return f"tenant-{uuid.uuid4().hex[:10]}"


def _code(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    code: str = response.json()["error"]["code"]
    return code


@pytest.fixture()
def anonymous(api_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api_url, timeout=30.0) as client:
        yield client


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer not-a-key"},
        {"Authorization": "Bearer grk_00000000_" + "x" * 43},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"Authorization": "Bearer grk_" + "a" * 5000},
    ],
    ids=["none", "empty", "garbage", "unknown", "basic", "huge"],
)
def test_missing_or_bad_key_is_401(anonymous: httpx.Client, headers: dict[str, str]) -> None:
    assert _code(anonymous.get(KBS, headers=headers), 401) == "unauthorized"
    assert _code(anonymous.get("/api/v1/system", headers=headers), 401) == "unauthorized"
    # Authentication comes before validation: an invalid body says nothing to a stranger.
    bad_body = anonymous.post(KBS, json={"nope": 1}, headers=headers)
    assert _code(bad_body, 401) == "unauthorized"
    assert anonymous.get("/health", headers=headers).status_code == 200


def test_capabilities_are_enforced(
    anonymous: httpx.Client, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    tenant = _tenant()
    reader = bearer(make_key(session_factory, settings, tenant, [R]).key)
    writer = bearer(make_key(session_factory, settings, tenant, [W]).key)
    modeller = bearer(make_key(session_factory, settings, tenant, [M]).key)
    admin = bearer(make_key(session_factory, settings, tenant, [A]).key)

    created = anonymous.post(KBS, json={"name": "caps"}, headers=writer)
    assert created.status_code == 201, created.text
    kb_id = created.json()["id"]
    assert _code(anonymous.post(KBS, json={"name": "no"}, headers=reader), 403) == "forbidden"
    assert _code(anonymous.get(KBS, headers=writer), 403) == "forbidden"
    assert _code(anonymous.delete(f"{KBS}/{kb_id}", headers=reader), 403) == "forbidden"
    assert [kb["id"] for kb in anonymous.get(KBS, headers=reader).json()] == [kb_id]
    search = {"query": "anything"}
    assert anonymous.post(f"{KBS}/{kb_id}/search", json=search, headers=reader).status_code == 200
    assert _code(anonymous.post(f"{KBS}/{kb_id}/search", json=search, headers=writer), 403)
    assert anonymous.get("/api/v1/system", headers=reader).status_code == 200

    preview = "/api/v1/initialization/extract/fabri-tag"
    for key in (reader, writer):
        assert _code(anonymous.post(preview, json={"text": "t"}, headers=key), 403) == "forbidden"
    assert _code(anonymous.post(preview, json={"text": ""}, headers=modeller), 422)
    for key in (reader, writer, modeller):
        assert _code(anonymous.get(KEYS, headers=key), 403) == "forbidden"
    # `admin` holds every capability of its tenant.
    assert [kb["id"] for kb in anonymous.get(KBS, headers=admin).json()] == [kb_id]
    assert anonymous.get(KEYS, headers=admin).status_code == 200


def test_key_is_shown_once_and_only_its_hash_is_stored(
    http: httpx.Client, db_session: Session, settings: Settings
) -> None:
    created = http.post(KEYS, json={"name": "ci", "capabilities": ["read", "write"]})
    assert created.status_code == 201, created.text
    body = created.json()
    plain = body["key"]
    assert plain.startswith(f"grk_{body['prefix']}_") and len(plain) > 40
    assert body["capabilities"] == ["read", "write"]

    listed = http.get(KEYS)
    assert listed.status_code == 200
    assert plain not in listed.text
    assert next(k for k in listed.json() if k["id"] == body["id"])["prefix"] == body["prefix"]
    assert all("key" not in k and "key_hash" not in k for k in listed.json())

    row = db_session.execute(select(ApiKey).where(ApiKey.id == uuid.UUID(body["id"]))).scalar_one()
    stored = [str(getattr(row, column.key)) for column in ApiKey.__table__.columns]
    assert not any(plain in value or plain.split("_", 2)[2] in value for value in stored)
    assert row.key_hash == hash_key(settings.auth, plain) and len(row.key_hash) == 64
    assert http.get(KBS, headers=bearer(plain)).status_code == 200


def test_revoked_key_is_401_at_once(http: httpx.Client, anonymous: httpx.Client) -> None:
    created = http.post(KEYS, json={"name": "short-lived", "capabilities": ["read"]}).json()
    key = bearer(created["key"])
    assert anonymous.get(KBS, headers=key).status_code == 200

    revoked = http.delete(f"{KEYS}/{created['id']}")
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]
    assert _code(anonymous.get(KBS, headers=key), 401) == "unauthorized"
    again = http.delete(f"{KEYS}/{created['id']}")
    assert again.json()["revoked_at"] == revoked.json()["revoked_at"]
    assert _code(http.delete(f"{KEYS}/{uuid.uuid4()}"), 404) == "not_found"


def test_admin_manages_only_its_own_tenant(
    anonymous: httpx.Client, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    admin_a = bearer(make_key(session_factory, settings, _tenant(), [A]).key)
    tenant_b = _tenant()
    admin_b = bearer(make_key(session_factory, settings, tenant_b, [A]).key)
    made = anonymous.post(KEYS, json={"name": "b", "capabilities": ["read"]}, headers=admin_b)
    b_key = made.json()

    assert b_key["id"] not in {k["id"] for k in anonymous.get(KEYS, headers=admin_a).json()}
    assert _code(anonymous.delete(f"{KEYS}/{b_key['id']}", headers=admin_a), 404) == "not_found"
    assert anonymous.get(KBS, headers=bearer(b_key["key"])).status_code == 200
    from_a = anonymous.post(KEYS, json={"name": "a", "capabilities": ["admin"]}, headers=admin_a)
    assert from_a.json()["tenant_id"] != b_key["tenant_id"]


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli.main", "keys", *args],
        cwd=ROOT,
        env={**worker_environment(env), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def test_cli_creates_lists_and_revokes(
    settings_env: dict[str, str], anonymous: httpx.Client, db_session: Session
) -> None:
    tenant = _tenant()
    made = _cli(settings_env, "create", "--tenant", tenant, "--name", "cli", "--cap", "read")
    assert made.returncode == 0, made.stderr
    plain = made.stdout.strip()
    assert plain.startswith("grk_") and "\n" not in plain
    assert anonymous.get(KBS, headers=bearer(plain)).status_code == 200
    assert _code(anonymous.post(KBS, json={"name": "x"}, headers=bearer(plain)), 403)

    prefix = plain.split("_")[1]
    row = db_session.execute(select(ApiKey).where(ApiKey.prefix == prefix)).scalar_one()
    assert row.capabilities == ["read"] and row.name == "cli"
    listed = _cli(settings_env, "list", "--tenant", tenant)
    assert listed.returncode == 0 and prefix in listed.stdout and plain not in listed.stdout

    revoked = _cli(settings_env, "revoke", str(row.id))
    assert revoked.returncode == 0, revoked.stderr
    assert _code(anonymous.get(KBS, headers=bearer(plain)), 401) == "unauthorized"
    assert _cli(settings_env, "revoke", str(uuid.uuid4())).returncode == 1
    refused = _cli(settings_env, "create", "--name", "bad", "--cap", "root")
    assert refused.returncode != 0
