"""The request guard over a real server and bare sockets: a route that needs a key refuses a
request without a valid one before any body byte is read, a declared length over the cap is a
413 unread, chunked bodies are cut at the cap, and every body but a multipart upload is held to
the JSON cap.

The app under test is a second API process (thread) on the session's services, with caps small
enough to pass in a test: 1 MiB for any body, 8 KiB for JSON, 50 characters per text field.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from api.request_guard import TOO_LARGE_CODE
from graphrag.settings import Settings
from tests.support.http_server import ThreadedServer
from tests.support.raw_http import RawResponse, chunked, exchange

pytestmark = pytest.mark.integration

JSON_CAP_KB = 8
KB_PATH = "/api/v1/knowledge-bases"
PIECE = 4096
BOUNDARY = "guardtestboundary"


@pytest.fixture(scope="module")
def small_caps_url(settings: Settings) -> Iterator[str]:
    from api.app import create_app

    api = settings.api.model_copy(
        update={"max_body_mb": 1, "max_json_body_kb": JSON_CAP_KB, "max_text_field_chars": 50}
    )
    small = settings.model_copy(update={"api": api})
    app = create_app(small)
    with ThreadedServer(app) as url:
        yield url


def _too_large(response: RawResponse, limit: int) -> None:
    assert response.status == 413, response.body
    error = response.json()["error"]
    assert error["code"] == TOO_LARGE_CODE
    assert error["details"]["limit_bytes"] == limit


def _still_answers(url: str, auth: dict[str, str]) -> None:
    """Another request right after a refusal: the API answers it, key and all."""
    assert httpx.get(f"{url}{KB_PATH}", headers=auth, timeout=10.0).status_code == 200


def _json_headers(auth: dict[str, str], **more: str) -> dict[str, str]:
    return {**auth, "Content-Type": "application/json", **more}


def _multipart_parts(size: int) -> Iterator[bytes]:
    yield (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n'
        "Content-Type: text/plain\r\n\r\n"
    ).encode()
    for _ in range(size // PIECE):
        yield b"w" * PIECE
    yield f"\r\n--{BOUNDARY}--\r\n".encode()


def test_declared_length_over_the_cap_is_413_without_reading_the_body(
    small_caps_url: str, auth_headers: dict[str, str]
) -> None:
    # No body byte is ever sent: an answer at all proves the body was not waited for.
    headers = _json_headers(auth_headers, **{"Content-Length": str(10**9)})
    response = exchange(small_caps_url, "POST", KB_PATH, headers, timeout_s=10.0)
    _too_large(response, JSON_CAP_KB * 1024)
    _still_answers(small_caps_url, auth_headers)


def test_declared_upload_is_401_unread_without_a_key_and_413_with_one(
    small_caps_url: str, auth_headers: dict[str, str]
) -> None:
    headers = {
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
        "Content-Length": str(2 * 1024 * 1024),
    }
    path = f"{KB_PATH}/{uuid.uuid4()}/knowledge/file"
    # No body byte is ever sent: the key is checked first, and a stranger learns no more.
    refused = exchange(small_caps_url, "POST", path, headers, timeout_s=10.0)
    assert refused.status == 401, refused.body
    assert refused.json()["error"]["code"] == "unauthorized"
    assert refused.headers["www-authenticate"] == "Bearer"
    response = exchange(small_caps_url, "POST", path, {**auth_headers, **headers}, timeout_s=10.0)
    _too_large(response, 1024 * 1024)
    _still_answers(small_caps_url, auth_headers)


@pytest.mark.parametrize("auth", [{}, {"Authorization": "Bearer grk_0000_unknown"}])
def test_big_untyped_body_without_a_valid_key_is_401_unread(
    small_caps_url: str, auth: dict[str, str], auth_headers: dict[str, str]
) -> None:
    # A body FastAPI would parse as JSON (no Content-Type), under the upload cap: the answer
    # comes without one byte of it, so nothing was parsed. `timeout_s` bounds the wait.
    headers = {**auth, "Content-Length": str(1024 * 1024 - 1)}
    response = exchange(small_caps_url, "POST", KB_PATH, headers, timeout_s=10.0)
    assert response.status == 401, response.body
    assert response.json()["error"]["code"] == "unauthorized"
    _still_answers(small_caps_url, auth_headers)


def test_a_body_that_is_not_json_is_401_without_a_key_and_422_with_one(
    small_caps_url: str, auth_headers: dict[str, str]
) -> None:
    raw = b'{"name": "unfinished'
    headers = {"Content-Type": "application/json", "Content-Length": str(len(raw))}
    refused = exchange(small_caps_url, "POST", KB_PATH, headers, [raw])
    assert refused.status == 401, refused.body
    invalid = exchange(small_caps_url, "POST", KB_PATH, {**auth_headers, **headers}, [raw])
    assert invalid.status == 422, invalid.body
    assert invalid.json()["error"]["code"] == "invalid_input"


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/octet-stream"])
def test_a_body_that_is_no_upload_has_the_json_cap(
    small_caps_url: str, auth_headers: dict[str, str], content_type: str | None
) -> None:
    typed = auth_headers if content_type is None else {**auth_headers, "Content-Type": content_type}
    declared = {**typed, "Content-Length": str(JSON_CAP_KB * 1024 + 1)}
    response = exchange(small_caps_url, "POST", KB_PATH, declared, timeout_s=10.0)
    _too_large(response, JSON_CAP_KB * 1024)
    # Without a declared length, the body is counted as it streams and cut at the JSON cap.
    pieces = [b"[", *[b"{}," * (PIECE // 3)] * (4 * JSON_CAP_KB * 1024 // PIECE)]
    streamed = {**typed, "Transfer-Encoding": "chunked"}
    response = exchange(small_caps_url, "POST", KB_PATH, streamed, chunked(pieces))
    _too_large(response, JSON_CAP_KB * 1024)
    _still_answers(small_caps_url, auth_headers)


def test_an_upload_over_the_json_cap_goes_through(
    small_caps_url: str, auth_headers: dict[str, str]
) -> None:
    with httpx.Client(base_url=small_caps_url, headers=auth_headers, timeout=30.0) as client:
        kb = client.post(KB_PATH, json={"name": f"kb-{uuid.uuid4().hex[:8]}"})
        assert kb.status_code == 201, kb.text
        text = b"Upload text. " * (4 * JSON_CAP_KB * 1024 // 13)
        upload = client.post(
            f"{KB_PATH}/{kb.json()['id']}/knowledge/file",
            files={"file": ("big.txt", text, "text/plain")},
        )
    assert upload.status_code == 202, upload.text


def test_chunked_json_over_its_cap_is_cut_and_413(
    small_caps_url: str, auth_headers: dict[str, str]
) -> None:
    text = "x" * (4 * JSON_CAP_KB * 1024)
    raw = json.dumps({"name": "big", "description": text}).encode()
    pieces = [raw[i : i + PIECE] for i in range(0, len(raw), PIECE)]
    headers = _json_headers(auth_headers, **{"Transfer-Encoding": "chunked"})
    response = exchange(small_caps_url, "POST", KB_PATH, headers, chunked(pieces))
    _too_large(response, JSON_CAP_KB * 1024)


def test_chunked_upload_over_the_body_cap_is_cut_and_413(
    small_caps_url: str, auth_headers: dict[str, str]
) -> None:
    headers = {
        **auth_headers,
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
        "Transfer-Encoding": "chunked",
    }
    path = f"{KB_PATH}/{uuid.uuid4()}/knowledge/file"
    total = 256 << 20  # far past the cap: the answer must come long before the end
    response = exchange(small_caps_url, "POST", path, headers, chunked(_multipart_parts(total)))
    _too_large(response, 1024 * 1024)
    assert response.sent_bytes < total // 2
    _still_answers(small_caps_url, auth_headers)


def test_chunked_json_under_the_cap_goes_through(
    small_caps_url: str, auth_headers: dict[str, str]
) -> None:
    raw = json.dumps({"name": f"kb-{uuid.uuid4().hex[:8]}"}).encode()
    headers = _json_headers(auth_headers, **{"Transfer-Encoding": "chunked"})
    response = exchange(small_caps_url, "POST", KB_PATH, headers, chunked([raw[:5], raw[5:]]))
    assert response.status == 201, response.body


def test_openai_routes_get_the_413_in_openai_shape(
    small_caps_url: str, auth_headers: dict[str, str]
) -> None:
    headers = _json_headers(auth_headers, **{"Content-Length": str(10**9)})
    response = exchange(small_caps_url, "POST", "/v1/chat/completions", headers, timeout_s=10.0)
    assert response.status == 413
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == TOO_LARGE_CODE and error["type"] == "invalid_request_error"


def test_text_field_over_the_limit_is_422(
    small_caps_url: str, auth_headers: dict[str, str]
) -> None:
    raw = json.dumps({"name": "kb", "description": "y" * 51}).encode()
    headers = _json_headers(auth_headers, **{"Content-Length": str(len(raw))})
    response = exchange(small_caps_url, "POST", KB_PATH, headers, [raw])
    assert response.status == 422, response.body
    errors = response.json()["error"]["details"]["errors"]
    assert [e["loc"] for e in errors] == [["body", "description"]]


def test_stored_text_longer_than_a_lowered_limit_is_still_read(
    small_caps_url: str, http: httpx.Client, auth_headers: dict[str, str]
) -> None:
    # Stored under the session API's limit, read under the 50-character one: the limit is for
    # what comes in, and a base stored before it was lowered still lists and reads.
    long_text = "an example text longer than fifty characters, stored before the cap"
    created = http.post(
        KB_PATH,
        json={"name": f"stored-{uuid.uuid4().hex[:8]}", "extract_config": {"text": long_text}},
    )
    assert created.status_code == 201, created.text
    kb_id = created.json()["id"]
    one = httpx.get(f"{small_caps_url}{KB_PATH}/{kb_id}", headers=auth_headers, timeout=10.0)
    assert one.status_code == 200, one.text
    assert one.json()["extract_config"]["text"] == long_text
    listed = httpx.get(f"{small_caps_url}{KB_PATH}", headers=auth_headers, timeout=10.0)
    assert listed.status_code == 200, listed.text
    assert kb_id in {kb["id"] for kb in listed.json()}
