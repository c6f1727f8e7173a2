"""A batch upload answers each file with its own status, as a single upload would, and the
accepted ones are processed like any other document."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from graphrag.settings import Settings
from tests.support.api_helpers import create_kb, upload, wait_terminal
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration

FileField = tuple[str, tuple[str, bytes, str]]


def _post(http: httpx.Client, kb_id: str, files: list[FileField]) -> httpx.Response:
    return http.post(f"/api/v1/knowledge-bases/{kb_id}/knowledge/files", files=files)


def _file(name: str, data: bytes, media_type: str = "text/markdown") -> FileField:
    return ("files", (name, data, media_type))


def test_each_file_gets_its_own_status(http: httpx.Client, worker: WorkerProcess) -> None:
    kb = create_kb(http)
    known = f"# Known\n\nThe Okafor dam holds water. {uuid.uuid4()}".encode()
    first = upload(http, kb["id"], "known.md", known).json()
    fresh = f"# Fresh\n\nThe Vasquez mill grinds corn. {uuid.uuid4()}".encode()
    response = _post(
        http,
        kb["id"],
        [
            _file("fresh.md", fresh),
            _file("again.md", known),
            _file("empty.txt", b"", "text/plain"),
            _file("program.exe", b"MZ\x90\x00" + bytes(range(256)) * 4, "application/octet-stream"),
        ],
    )
    assert response.status_code == 207, response.text
    body: dict[str, Any] = response.json()
    items = body["items"]
    assert [i["file_name"] for i in items] == ["fresh.md", "again.md", "empty.txt", "program.exe"]
    assert [i["status"] for i in items] == [202, 409, 422, 415]
    assert (body["accepted"], body["refused"]) == (1, 3)
    assert items[1]["error"]["code"] == "duplicate_document"
    assert items[1]["error"]["details"]["existing_id"] == first["id"]
    assert items[2]["error"]["code"] and items[3]["error"]["code"]
    assert all(i["knowledge"] is None for i in items[1:])
    done = wait_terminal(http, items[0]["knowledge"]["id"])
    assert done["parse_status"] == "completed" and done["chunk_count"] >= 1
    listed = http.get(f"/api/v1/knowledge-bases/{kb['id']}/knowledge").json()
    assert listed["total"] == 2  # nothing half-written for the refused files


def test_too_many_files_is_refused_whole(http: httpx.Client, settings: Settings) -> None:
    kb = create_kb(http)
    files = [
        _file(f"f{i}.md", f"file {i} {uuid.uuid4()}".encode())
        for i in range(settings.api.max_batch_files + 1)
    ]
    response = _post(http, kb["id"], files)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_input"
    assert http.get(f"/api/v1/knowledge-bases/{kb['id']}/knowledge").json()["total"] == 0


def test_unknown_base_is_one_404(http: httpx.Client) -> None:
    response = _post(http, str(uuid.uuid4()), [_file("a.md", b"# a")])
    assert response.status_code == 404
