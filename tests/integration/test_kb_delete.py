"""Deleting a large base: every foreign key a delete follows has an index, the purge goes in
committed batches through the real worker, and a purge cut short is visible through the API
and resumes from what it left."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.models import Capability
from graphrag.db.engine import session_scope
from graphrag.graph.store import DisabledGraphStore
from graphrag.kb.schemas import KnowledgeBaseCreate
from graphrag.kb.service import create_kb
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant
from tests.support.api_helpers import create_kb as create_kb_through_api
from tests.support.auth_helpers import bearer, make_key
from tests.support.bulk_base import bulk_rows, count_rows
from tests.support.http_server import ThreadedServer
from tests.support.isolated_worker import on_own_queues, own_database
from tests.support.services import data_dir
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration

DELETE_TIMEOUT_S = 120.0
POLL_S = 0.2

# Columns of every foreign key, and of every index's leading columns, per table.
_FOREIGN_KEYS = text(
    "SELECT conrelid::regclass::text, conname, conkey FROM pg_constraint"
    " WHERE contype = 'f' AND connamespace = 'public'::regnamespace"
)
_INDEXES = text(
    "SELECT indrelid::regclass::text, string_to_array(indkey::text, ' ')::int2[] FROM pg_index"
    " WHERE indrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'public'::regnamespace)"
)


def test_every_foreign_key_has_an_index(engine: Engine) -> None:
    with engine.connect() as conn:
        keys = conn.execute(_FOREIGN_KEYS).all()
        indexes = conn.execute(_INDEXES).all()
    assert keys, "the schema has foreign keys"
    leading: dict[str, list[list[int]]] = {}
    for table, columns in indexes:
        leading.setdefault(table, []).append(list(columns))
    missing = [
        (table, name)
        for table, name, columns in keys
        if not any(
            sorted(index[: len(columns)]) == sorted(columns) for index in leading.get(table, [])
        )
    ]
    assert missing == []


def _wait(check: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + DELETE_TIMEOUT_S
    while not (found := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(POLL_S)
    return found


def test_a_large_base_is_deleted_through_the_worker(
    http: httpx.Client, worker: WorkerProcess, session_factory: sessionmaker[Session]
) -> None:
    kb_id = uuid.UUID(create_kb_through_api(http)["id"])
    bulk_rows(session_factory, kb_id, documents=20, chunks_per_document=1000)
    assert count_rows(session_factory, kb_id) == (1, 20, 20_000)

    assert http.delete(f"/api/v1/knowledge-bases/{kb_id}").status_code == 202
    assert http.get(f"/api/v1/knowledge-bases/{kb_id}").status_code == 404
    first = http.get(f"/api/v1/knowledge-bases/{kb_id}/deletion")
    if first.status_code == 200:  # else already gone
        body = first.json()
        assert body["status"] == "deleting" and body["chunks_left"] <= 20_000, body
    _wait(lambda: http.get(f"/api/v1/knowledge-bases/{kb_id}/deletion").status_code == 404)
    assert count_rows(session_factory, kb_id) == (0, 0, 0)


def test_an_active_base_has_no_deletion(http: httpx.Client) -> None:
    kb_id = create_kb_through_api(http)["id"]
    missing = http.get(f"/api/v1/knowledge-bases/{kb_id}/deletion")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_an_interrupted_delete_is_visible_and_resumes(
    settings: Settings, settings_env: dict[str, str], services_env: dict[str, str]
) -> None:
    moved, env = on_own_queues(settings, settings_env)
    # A short statement timeout, so a document row held by another transaction fails the purge
    # fast; re-sends enough that the outbox keeps trying while it is held.
    env = {
        **env,
        "DATABASE_STATEMENT_TIMEOUT_MS": "1000",
        "INGEST_PURGE_BATCH_ROWS": "500",
        "OUTBOX_MAX_RESENDS": "1000",
    }
    with own_database(services_env["DATABASE_URL"], moved, env) as (own, env, sessions):
        _interrupt_and_resume(own, env, sessions)


def _interrupt_and_resume(
    own: Settings, env: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    from api.app import create_app
    from workers.celery_app import create_celery

    with session_scope(sessions) as session:
        tenant = ensure_tenant(session, own.api.default_tenant)
        kb_id = create_kb(
            session, own, DisabledGraphStore(), tenant, KnowledgeBaseCreate(name="big")
        ).id
    bulk_rows(sessions, kb_id, documents=4, chunks_per_document=1000)
    headers = bearer(make_key(sessions, own, own.api.default_tenant, list(Capability)).key)
    celery = create_celery(own)
    celery.control.purge()
    worker = WorkerProcess(env, data_dir() / "test-logs" / "worker-kb-delete.log", concurrency=1)
    holder = sessions()
    try:
        with (
            ThreadedServer(create_app(own)) as url,
            httpx.Client(base_url=url, headers=headers) as http,
        ):
            assert http.delete(f"/api/v1/knowledge-bases/{kb_id}").status_code == 202
            # Another transaction holds one document row before any worker runs: the purge
            # removes every chunk in its batches, then its delete of the documents waits on
            # that row past the statement timeout.
            holder.execute(
                text("SELECT id FROM knowledge WHERE kb_id = :kb LIMIT 1 FOR UPDATE"),
                {"kb": kb_id},
            )
            worker.start(celery)
            status_url = f"/api/v1/knowledge-bases/{kb_id}/deletion"
            failed = _wait(lambda: _with_error(http.get(status_url)))
            assert failed["status"] == "deleting"
            assert failed["chunks_left"] == 0 and failed["documents_left"] == 4, failed
            assert failed["purge_failures"] >= 1 and failed["purge_runs"] >= 1
            assert "statement timeout" in failed["last_error"]
            holder.rollback()  # the row is free: the next run finishes the purge
            _wait(lambda: http.get(status_url).status_code == 404)
        assert count_rows(sessions, kb_id) == (0, 0, 0)
    finally:
        holder.rollback()
        holder.close()
        worker.stop()


def _with_error(response: httpx.Response) -> dict[str, Any] | None:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body if body["last_error"] else None
