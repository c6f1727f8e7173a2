"""Refusing bad input stays cheap, over real HTTP on an API process of its own.

A list of a million bad items once made one validation error per item: a 1 MB
`"relation_types": [1, 1, ...]` to graph search gave 524k errors, a 52.8 MB 422 and froze
`/health`. Now the list's cap is checked before its items (one error), a 422 lists a bounded
number of errors, unknown fields are one error, and `/health` answers within a second while
several such bodies are refused at once. The body cap is the route's: a JSON route refuses a
multipart body (415) before reading it, whatever its declared size, and only a route taking a
document's text has the larger JSON cap. The MCP tools' arguments are bounded the same way.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from api.request_guard import NOT_MULTIPART_CODE, TOO_LARGE_CODE
from graphrag.settings import Settings
from tests.support.api_helpers import create_kb
from tests.support.api_process import api_process
from tests.support.raw_http import chunked, exchange

pytestmark = pytest.mark.integration

SENDERS = 4  # bad bodies in flight at once
SENDS_EACH = 3
HEALTH_WITHIN_S = 1.0
SMALL_REPLY_BYTES = 4096  # a refusal's whole reply stays under this
PIECE = 65536
BOUNDARY = "boundsboundary"


@pytest.fixture(scope="module")
def api(settings_env: dict[str, str]) -> Iterator[str]:
    with api_process(settings_env) as url:
        yield url


@pytest.fixture(scope="module")
def kb_path(api: str, auth_headers: dict[str, str]) -> str:
    with httpx.Client(base_url=api, headers=auth_headers, timeout=30.0) as http:
        kb = create_kb(http)
    return f"/api/v1/knowledge-bases/{kb['id']}"


def _list_body(cap: int) -> bytes:
    """A graph search whose `relation_types` holds bad items up to just under `cap` bytes."""
    head, tail = b'{"entity": "Ada", "relation_types": [1', b"]}"
    count = (cap - len(head) - len(tail)) // 2
    body = head + b",1" * count + tail
    assert cap - 2 < len(body) <= cap
    return body


def _post(url: str, path: str, auth: dict[str, str], body: bytes) -> httpx.Response:
    headers = {**auth, "Content-Type": "application/json"}
    return httpx.post(f"{url}{path}", content=body, headers=headers, timeout=60.0)


def _small_422(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 422, response.text[:500]
    assert len(response.content) < SMALL_REPLY_BYTES
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == "invalid_input"
    return error


def test_a_body_of_a_long_bad_list_is_one_small_error(
    api: str, kb_path: str, auth_headers: dict[str, str], settings: Settings
) -> None:
    body = _list_body(settings.api.max_json_body_bytes)
    error = _small_422(_post(api, f"{kb_path}/graph-search", auth_headers, body))
    assert error["details"]["error_count"] == 1
    [only] = error["details"]["errors"]
    assert only["loc"] == ["body", "relation_types"] and only["type"] == "too_long"


def test_health_answers_while_long_lists_are_refused(
    api: str, kb_path: str, auth_headers: dict[str, str], settings: Settings
) -> None:
    body = _list_body(settings.api.max_json_body_bytes)
    statuses: list[int] = []

    def send() -> None:
        for _ in range(SENDS_EACH):
            statuses.append(_post(api, f"{kb_path}/graph-search", auth_headers, body).status_code)

    senders = [threading.Thread(target=send, daemon=True) for _ in range(SENDERS)]
    for sender in senders:
        sender.start()
    slowest = 0.0
    probes = 0
    with httpx.Client(base_url=api, timeout=HEALTH_WITHIN_S) as probe:
        while any(sender.is_alive() for sender in senders):
            started = time.monotonic()
            try:
                assert probe.get("/health").status_code == 200
            except httpx.TimeoutException:
                pytest.fail(f"/health did not answer within {HEALTH_WITHIN_S} s")
            slowest = max(slowest, time.monotonic() - started)
            probes += 1
    assert statuses == [422] * (SENDERS * SENDS_EACH)
    assert probes >= 1 and slowest < HEALTH_WITHIN_S


def test_a_422_lists_a_bounded_number_of_errors(
    api: str, kb_path: str, auth_headers: dict[str, str], settings: Settings
) -> None:
    # As many bad items as the list may hold: each is an error, the reply lists the first ones.
    count = settings.graph_search.max_relation_types
    body = json.dumps({"entity": "Ada", "relation_types": [1] * count}).encode()
    error = _small_422(_post(api, f"{kb_path}/graph-search", auth_headers, body))
    assert error["details"]["error_count"] == count > settings.api.max_validation_errors
    assert len(error["details"]["errors"]) == settings.api.max_validation_errors


def test_unknown_fields_are_one_error_with_a_cut_name(
    api: str, kb_path: str, auth_headers: dict[str, str], settings: Settings
) -> None:
    long_name = "u" * (10 * settings.api.max_error_chars)
    fields = {f"k{i}": 0 for i in range(50_000)}
    body = json.dumps({long_name: 0, "entity": "Ada", **fields}).encode()
    assert len(body) < settings.api.max_json_body_bytes
    error = _small_422(_post(api, f"{kb_path}/graph-search", auth_headers, body))
    assert error["details"]["error_count"] == 1
    [only] = error["details"]["errors"]
    assert only["type"] == "extra_forbidden" and only["msg"].startswith("50001 unknown fields")
    assert len(only["msg"]) <= settings.api.max_error_chars


def test_the_cap_is_the_routes(
    api: str, kb_path: str, auth_headers: dict[str, str], settings: Settings
) -> None:
    over = settings.api.max_json_body_bytes + 1
    assert over < settings.api.max_text_body_bytes
    # A small-JSON route: 413 for a body just over its cap, declared or streamed.
    refused = _post(api, f"{kb_path}/graph-search", auth_headers, b" " * over)
    assert refused.status_code == 413, refused.text
    assert refused.json()["error"]["code"] == TOO_LARGE_CODE
    assert refused.json()["error"]["details"]["limit_bytes"] == settings.api.max_json_body_bytes
    # The text import takes a body that size: its route has the text cap.
    content = "Route caps. " * (over // 12 + 1)
    text = json.dumps({"title": f"big-{uuid.uuid4().hex[:8]}", "content": content}).encode()
    assert settings.api.max_json_body_bytes < len(text) < settings.api.max_text_body_bytes
    accepted = _post(api, f"{kb_path}/knowledge/text", auth_headers, text)
    assert accepted.status_code == 202, accepted.text[:500]


def _not_multipart(status: int, body: bytes) -> None:
    assert status == 415, body[:500]
    assert json.loads(body)["error"]["code"] == NOT_MULTIPART_CODE


@pytest.mark.parametrize("route", ["graph-search", "knowledge/text"])
def test_multipart_to_a_json_route_is_415_unread(
    api: str, kb_path: str, auth_headers: dict[str, str], route: str
) -> None:
    multipart = {**auth_headers, "Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
    size = 20 * 1024 * 1024
    # Declared: the answer comes before one body byte is sent.
    declared = exchange(
        api, "POST", f"{kb_path}/{route}", {**multipart, "Content-Length": str(size)}
    )
    _not_multipart(declared.status, declared.body)
    # Streamed without a length: refused at once, long before the 20 MB are through.
    pieces = [b"w" * PIECE] * (size // PIECE)
    streamed = {**multipart, "Transfer-Encoding": "chunked"}
    cut = exchange(api, "POST", f"{kb_path}/{route}", streamed, chunked(pieces))
    _not_multipart(cut.status, cut.body)
    assert cut.sent_bytes < size // 2
    assert httpx.get(f"{api}/health", timeout=HEALTH_WITHIN_S).status_code == 200


def test_an_upload_route_still_takes_multipart(
    api: str, kb_path: str, auth_headers: dict[str, str]
) -> None:
    files = {"file": (f"note-{uuid.uuid4().hex[:8]}.md", b"# A note\n\nSome text.", "text/plain")}
    response = httpx.post(
        f"{api}{kb_path}/knowledge/file", files=files, headers=auth_headers, timeout=30.0
    )
    assert response.status_code == 202, response.text


def test_mcp_tool_arguments_are_bounded(
    api: str, kb_path: str, auth_headers: dict[str, str], settings: Settings
) -> None:
    kb_id = kb_path.rsplit("/", 1)[1]
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "graph_search",
            "arguments": {"kb": kb_id, "entity": "Ada", "relation_types": [1] * 200_000},
        },
    }
    body = json.dumps(call).encode()
    assert len(body) < settings.faces.mcp_max_body_bytes
    headers = {**auth_headers, "Accept": "application/json, text/event-stream"}
    response = httpx.post(
        f"{api}/mcp", content=body, headers={**headers, "Content-Type": "application/json"}
    )
    assert response.status_code == 200, response.text[:500]
    assert len(response.content) < SMALL_REPLY_BYTES
    result = response.json()["result"]
    text = " ".join(part.get("text", "") for part in result["content"])
    assert result["isError"] and "graph_search.max_relation_types" in text, text
