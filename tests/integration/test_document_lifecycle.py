"""Knowledge base CRUD, re-parse, cancel and delete through the API, with a real worker."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest
from celery import Celery
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from graphrag.db.models import Chunk, Knowledge, KnowledgeBase
from graphrag.settings import Settings
from tests.support import sample_files
from tests.support.api_helpers import all_chunks, create_kb, upload, wait_terminal
from tests.support.worker import WorkerProcess, wait_idle

pytestmark = pytest.mark.integration

GONE_TIMEOUT_S = 60.0


def _wait_gone(db_session: Session, model: type[Any], row_id: str) -> None:
    deadline = time.monotonic() + GONE_TIMEOUT_S
    while db_session.get(model, uuid.UUID(row_id)) is not None:
        assert time.monotonic() < deadline, f"{model.__name__} {row_id} still present"
        time.sleep(0.2)
        db_session.expire_all()


def _chunk_count(db_session: Session, **where: uuid.UUID) -> int:
    query = select(func.count()).select_from(Chunk)
    for column, value in where.items():
        query = query.where(getattr(Chunk, column) == value)
    return db_session.execute(query).scalar_one()


def test_kb_crud(http: httpx.Client) -> None:
    kb = create_kb(http, description="first")
    assert kb["chunking"]["chunk_size"] > 0 and kb["graph_on"] is False
    assert http.post("/api/v1/knowledge-bases", json={"name": kb["name"]}).status_code == 409
    changed = http.patch(f"/api/v1/knowledge-bases/{kb['id']}", json={"description": "second"})
    assert changed.status_code == 200 and changed.json()["description"] == "second"
    assert kb["id"] in {k["id"] for k in http.get("/api/v1/knowledge-bases").json()}
    assert http.get(f"/api/v1/knowledge-bases/{kb['id']}").json()["description"] == "second"


def test_reparse_bumps_attempt_and_replaces_chunks(
    http: httpx.Client, worker: WorkerProcess, db_session: Session
) -> None:
    kb = create_kb(http)
    text = b"The Quispe mill grinds corn for the valley.\n\nIt is old, built of stone by a river."
    response = upload(http, kb["id"], "r.txt", text)
    doc = wait_terminal(http, response.json()["id"])
    first = all_chunks(http, doc["id"])
    http.patch(
        f"/api/v1/knowledge-bases/{kb['id']}",
        json={"chunking": {"chunk_size": 50, "chunk_overlap": 0, "separators": [" "]}},
    )
    again = http.post(f"/api/v1/knowledge/{doc['id']}/reparse")
    assert again.status_code == 202 and again.json()["attempt"] == 2
    doc = wait_terminal(http, doc["id"])
    assert doc["attempt"] == 2 and doc["parse_status"] == "completed"
    second = all_chunks(http, doc["id"])
    assert len(second) > len(first)
    knowledge_id = uuid.UUID(doc["id"])
    assert _chunk_count(db_session, knowledge_id=knowledge_id) == len(second)


def test_delete_document_removes_rows_and_file(
    http: httpx.Client, worker: WorkerProcess, db_session: Session, settings: Settings
) -> None:
    kb = create_kb(http)
    response = upload(http, kb["id"], "d.txt", f"Delete me {uuid.uuid4()}".encode())
    doc = wait_terminal(http, response.json()["id"])
    stored = list(settings.resolve(settings.storage_dir).rglob(f"{doc['id']}*"))
    assert stored
    deleted = http.delete(f"/api/v1/knowledge/{doc['id']}")
    assert deleted.status_code == 202
    assert http.get(f"/api/v1/knowledge/{doc['id']}").status_code == 404
    _wait_gone(db_session, Knowledge, doc["id"])
    assert _chunk_count(db_session, knowledge_id=uuid.UUID(doc["id"])) == 0
    assert not any(p.exists() for p in stored)


def test_delete_kb_removes_everything(
    http: httpx.Client, worker: WorkerProcess, db_session: Session
) -> None:
    kb = create_kb(http)
    ids = [
        upload(http, kb["id"], f"{i}.txt", f"Doc {i} {uuid.uuid4()}".encode()).json()["id"]
        for i in range(3)
    ]
    for doc_id in ids:
        wait_terminal(http, doc_id)
    assert http.delete(f"/api/v1/knowledge-bases/{kb['id']}").status_code == 202
    assert http.get(f"/api/v1/knowledge-bases/{kb['id']}").status_code == 404
    _wait_gone(db_session, KnowledgeBase, kb["id"])
    for doc_id in ids:
        assert db_session.get(Knowledge, uuid.UUID(doc_id)) is None
    assert _chunk_count(db_session, kb_id=uuid.UUID(kb["id"])) == 0


def test_cancel_stops_work_and_writes_nothing(
    http: httpx.Client, worker: WorkerProcess, db_session: Session, celery_app: Celery
) -> None:
    kb = create_kb(http)
    pages = [[f"PAGE {i} OF THE SLOW SCAN", str(uuid.uuid4())] for i in range(4)]
    response = upload(http, kb["id"], "slow.pdf", sample_files.scanned_pdf(pages))
    doc_id = response.json()["id"]
    cancelled = http.post(f"/api/v1/knowledge/{doc_id}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["parse_status"] == "cancelled"
    assert http.post(f"/api/v1/knowledge/{doc_id}/cancel").status_code == 409
    wait_idle(celery_app)
    doc = http.get(f"/api/v1/knowledge/{doc_id}").json()
    assert doc["parse_status"] == "cancelled"
    assert _chunk_count(db_session, knowledge_id=uuid.UUID(doc_id)) == 0
