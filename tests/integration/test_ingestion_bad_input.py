"""Bad input gets a clear JSON error with a stable code, and nothing is half-written."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from graphrag.db.models import Knowledge
from graphrag.settings import Settings
from tests.support import sample_files
from tests.support.api_helpers import create_kb, upload, wait_terminal
from tests.support.http_server import ThreadedServer
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration

RACERS = 8  # concurrent uploads of one file


@pytest.fixture(scope="module")
def kb(http_module: httpx.Client, worker: WorkerProcess) -> dict[str, Any]:
    return create_kb(http_module)


def _count(db_session: Session, kb_id: str) -> int:
    db_session.expire_all()
    return db_session.execute(
        select(func.count()).select_from(Knowledge).where(Knowledge.kb_id == uuid.UUID(kb_id))
    ).scalar_one()


def _error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()["error"]
    assert body["code"] == code
    assert body["message"]
    return body


@pytest.fixture(scope="module")
def small_cap_url(settings: Settings) -> Iterator[str]:
    """A second API process on the same services with a 1 MB upload cap."""
    from api.app import create_app

    with ThreadedServer(create_app(settings.model_copy(update={"max_file_size_mb": 1}))) as url:
        yield url


def test_too_large_is_413(
    small_cap_url: str, kb: dict[str, Any], db_session: Session, auth_headers: dict[str, str]
) -> None:
    before = _count(db_session, kb["id"])
    with httpx.Client(base_url=small_cap_url, timeout=30.0, headers=auth_headers) as client:
        big = b"word " * (300 * 1024)
        _error(upload(client, kb["id"], "big.txt", big), 413, "file_too_large")
    assert _count(db_session, kb["id"]) == before


@pytest.mark.parametrize(
    ("name", "data", "media_type"),
    [
        ("fake.pdf", sample_files.png_with_text(["x"]), "application/pdf"),
        ("photo.png", b"%PDF-1.7\n" + b"0" * 100, "image/png"),
        ("blob.bin", bytes(range(256)) * 40, "application/octet-stream"),
        ("tool.exe", b"MZ\x90\x00" + bytes(200), "application/x-msdownload"),
    ],
)
def test_wrong_or_unknown_type_is_415(
    http: httpx.Client,
    kb: dict[str, Any],
    db_session: Session,
    name: str,
    data: bytes,
    media_type: str,
) -> None:
    before = _count(db_session, kb["id"])
    _error(upload(http, kb["id"], name, data, media_type), 415, "unsupported_media_type")
    assert _count(db_session, kb["id"]) == before


def test_a_docx_of_too_many_files_is_422_and_unstored(
    http: httpx.Client, kb: dict[str, Any], db_session: Session, settings: Settings
) -> None:
    cap = settings.ingest.docx_max_entries
    before = _count(db_session, kb["id"])
    crowded = sample_files.docx_with_extra_entries(cap)  # its own parts push it past the cap
    body = _error(upload(http, kb["id"], "crowded.docx", crowded), 422, "decode_budget_exceeded")
    assert f"(at most {cap}, ingest.docx_max_entries)" in body["message"]
    assert _count(db_session, kb["id"]) == before
    # The API goes on answering: the listing, and an upload right after.
    assert http.get(f"/api/v1/knowledge-bases/{kb['id']}/knowledge").status_code == 200
    note = f"A note about the Marlow crane {uuid.uuid4()}.".encode()
    assert upload(http, kb["id"], "note.txt", note).status_code == 202


def test_empty_file_is_422(http: httpx.Client, kb: dict[str, Any]) -> None:
    _error(upload(http, kb["id"], "empty.txt", b""), 422, "empty_file")
    _error(upload(http, kb["id"], "blank.txt", b"  \n\t "), 422, "empty_file")


def test_duplicate_is_409_with_existing_id(http: httpx.Client, kb: dict[str, Any]) -> None:
    data = f"Unique text {uuid.uuid4()} for the duplicate check.".encode()
    first = upload(http, kb["id"], "a.txt", data)
    assert first.status_code == 202
    body = _error(upload(http, kb["id"], "b.txt", data), 409, "duplicate_document")
    assert body["details"]["existing_id"] == first.json()["id"]


def test_same_file_uploaded_at_once_is_stored_once(
    http: httpx.Client, kb: dict[str, Any], db_session: Session
) -> None:
    # Concurrent uploads can all pass the duplicate check; the unique index then keeps one
    # and the others must still answer 409 with its id, never a 5xx or a second row.
    data = f"Raced text {uuid.uuid4()} sent by several clients at once.".encode()
    before = _count(db_session, kb["id"])
    with ThreadPoolExecutor(RACERS) as pool:
        answers = list(
            pool.map(lambda i: upload(http, kb["id"], f"race-{i}.txt", data), range(RACERS))
        )
    accepted = [a for a in answers if a.status_code == 202]
    assert len(accepted) == 1, [a.text for a in answers]
    kept = accepted[0].json()["id"]
    for answer in answers:
        if answer is not accepted[0]:
            body = _error(answer, 409, "duplicate_document")
            assert body["details"]["existing_id"] == kept
    assert _count(db_session, kb["id"]) == before + 1


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("locked.pdf", sample_files.encrypted_pdf("secret plans"), "password"),
        ("broken.pdf", sample_files.corrupt_pdf("half a document " * 200), ""),
    ],
)
def test_unreadable_pdf_ends_failed_with_a_reason(
    http: httpx.Client, kb: dict[str, Any], name: str, data: bytes, reason: str
) -> None:
    response = upload(http, kb["id"], name, data)
    assert response.status_code == 202, response.text
    doc = wait_terminal(http, response.json()["id"])
    assert doc["parse_status"] == "failed"
    assert doc["error"] and reason in doc["error"].lower()
    chunks = http.get(f"/api/v1/knowledge/{doc['id']}/chunks").json()
    assert chunks["total"] == 0


@pytest.mark.parametrize(
    "name",
    [
        "../../../etc/passwd.txt",
        "..\\..\\windows\\evil.txt",
        "ctl\x00\x07\x1bname.txt",
        "/absolute/path.txt",
        "'; DROP TABLE knowledge; --.txt",
    ],
)
def test_hostile_file_names_are_neutralised(
    http: httpx.Client, kb: dict[str, Any], settings: Settings, name: str
) -> None:
    data = f"content for {uuid.uuid4()}".encode()
    response = upload(http, kb["id"], name, data)
    assert response.status_code == 202, response.text
    stored = response.json()["file_name"]
    assert "/" not in stored and "\\" not in stored and ".." not in stored
    assert all(ch.isprintable() for ch in stored)
    assert len(stored) <= settings.ingest.file_name_max_chars
    assert len(stored.encode("utf-8")) <= settings.ingest.file_name_max_bytes
    assert stored.endswith(".txt")
    read_back = http.get(f"/api/v1/knowledge/{response.json()['id']}").json()["file_name"]
    assert read_back == stored
    root = settings.resolve(settings.storage_dir).resolve()
    files = list(root.rglob(f"{response.json()['id']}*"))
    assert len(files) == 1 and files[0].resolve().is_relative_to(root)


@pytest.mark.parametrize(
    "stem",
    [
        "x" * 1000,  # past the character cap
        "漢" * 300,  # 3 bytes each: past the byte cap first
        "😀" * 100,  # 4 bytes each
        "aé漢😀" * 60,  # 1 to 4 bytes: the byte cap falls inside a character
    ],
    ids=["ascii", "cjk", "emoji", "mixed"],
)
def test_long_file_names_are_cut_exactly_between_characters(
    http: httpx.Client, kb: dict[str, Any], settings: Settings, stem: str
) -> None:
    limits, extension = settings.ingest, ".txt"
    response = upload(http, kb["id"], stem + extension, f"text {uuid.uuid4()}".encode())
    assert response.status_code == 202, response.text
    stored = response.json()["file_name"]
    size = len(stored.encode("utf-8"))  # raises on a lone surrogate: valid UTF-8 only
    assert len(stored) <= limits.file_name_max_chars and size <= limits.file_name_max_bytes
    assert "\ufffd" not in stored
    assert stored.endswith(extension)
    kept = stored.removesuffix(extension)
    assert kept and stem.startswith(kept)
    # Cut at the limit, not before it: one more character of the original would not fit.
    longer = stem[: len(kept) + 1] + extension
    assert (
        len(longer) > limits.file_name_max_chars
        or len(longer.encode("utf-8")) > limits.file_name_max_bytes
    )
    read_back = http.get(f"/api/v1/knowledge/{response.json()['id']}").json()["file_name"]
    assert read_back == stored


def test_multipart_header_past_the_parser_limit_is_a_json_400(
    http: httpx.Client, kb: dict[str, Any]
) -> None:
    response = upload(http, kb["id"], "y" * 20_000 + ".txt", b"some text")
    _error(response, 400, "bad_request")


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("file:///etc/passwd", "invalid_input"),
        ("ftp://example.org/a.txt", "invalid_input"),
        ("http://127.0.0.1:1/x", "url_target_refused"),
        ("http://localhost/x", "url_target_refused"),
        ("http://[::1]/x", "url_target_refused"),
        ("http://10.0.0.5/x", "url_target_refused"),
        ("http://169.254.169.254/latest", "url_target_refused"),
    ],
)
def test_url_import_refuses_schemes_and_private_targets(
    http: httpx.Client, kb: dict[str, Any], url: str, code: str
) -> None:
    response = http.post(f"/api/v1/knowledge-bases/{kb['id']}/knowledge/url", json={"url": url})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == code


def test_url_import_when_private_targets_are_allowed(
    settings: Settings, kb: dict[str, Any], tmp_path: Path, auth_headers: dict[str, str]
) -> None:
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse, RedirectResponse
    from starlette.routing import Route

    from api.app import create_app

    page = f"The Moreau archive holds {uuid.uuid4()} letters."
    site = Starlette(
        routes=[
            Route("/doc.txt", lambda _: PlainTextResponse(page)),
            Route("/moved", lambda _: RedirectResponse("/doc.txt")),
        ]
    )
    ingest = settings.ingest.model_copy(update={"url_allow_private": True})
    with (
        ThreadedServer(site) as site_url,
        ThreadedServer(create_app(settings.model_copy(update={"ingest": ingest}))) as api_url,
        httpx.Client(base_url=api_url, timeout=30.0, headers=auth_headers) as client,
    ):
        response = client.post(
            f"/api/v1/knowledge-bases/{kb['id']}/knowledge/url", json={"url": f"{site_url}/moved"}
        )
        assert response.status_code == 202, response.text
        doc = wait_terminal(client, response.json()["id"])
        assert doc["parse_status"] == "completed"
        assert doc["source"] == "url" and doc["source_url"].endswith("/doc.txt")
        chunks = client.get(f"/api/v1/knowledge/{doc['id']}/chunks").json()["items"]
        assert page in chunks[0]["content"]


def test_unknown_ids_and_bad_bodies(http: httpx.Client) -> None:
    _error(http.get(f"/api/v1/knowledge-bases/{uuid.uuid4()}"), 404, "not_found")
    _error(http.get("/api/v1/knowledge-bases/not-a-uuid"), 422, "invalid_input")
    _error(http.post("/api/v1/knowledge-bases", json={"name": ""}), 422, "invalid_input")
    _error(
        http.post(
            "/api/v1/knowledge-bases",
            json={
                "name": "x",
                "chunking": {"chunk_size": 10, "chunk_overlap": 10, "separators": ["\n"]},
            },
        ),
        422,
        "invalid_input",
    )
    _error(
        http.post(
            "/api/v1/knowledge-bases",
            content=b"{not json",
            headers={"content-type": "application/json"},
        ),
        422,
        "invalid_input",
    )
