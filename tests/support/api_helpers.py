"""Small helpers for tests that drive the REST API."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx

from tests.fakes.llm_script import RecordedRequest

__all__ = ["all_chunks", "chat_usage", "create_kb", "read_sse", "upload", "wait_terminal"]

WAIT_TIMEOUT_S = 240.0
POLL_S = 0.25
TERMINAL = {"completed", "failed", "cancelled"}


def create_kb(http: httpx.Client, **fields: Any) -> dict[str, Any]:
    body = {"name": f"kb-{uuid.uuid4().hex[:10]}", **fields}
    response = http.post("/api/v1/knowledge-bases", json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def upload(
    http: httpx.Client, kb_id: str, name: str, data: bytes, media_type: str | None = None
) -> httpx.Response:
    files = {"file": (name, data, media_type or "application/octet-stream")}
    return http.post(f"/api/v1/knowledge-bases/{kb_id}/knowledge/file", files=files)


def wait_terminal(
    http: httpx.Client,
    knowledge_id: str,
    timeout_s: float = WAIT_TIMEOUT_S,
    each_poll: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Poll the document until it reaches a terminal status; fail the test on time-out.
    `each_poll` runs before every poll (a test that must keep something alive meanwhile)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if each_poll is not None:
            each_poll()
        doc: dict[str, Any] = http.get(f"/api/v1/knowledge/{knowledge_id}").json()
        if doc["parse_status"] in TERMINAL:
            return doc
        if time.monotonic() > deadline:
            raise AssertionError(f"document {knowledge_id} still {doc['parse_status']}: {doc}")
        time.sleep(POLL_S)


def all_chunks(http: httpx.Client, knowledge_id: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    page = 1
    while True:
        body = http.get(
            f"/api/v1/knowledge/{knowledge_id}/chunks", params={"page": page, "page_size": 100}
        ).json()
        items.extend(body["items"])
        if len(items) >= body["total"]:
            return items
        page += 1


def read_sse(client: httpx.Client, url: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """POST `body` and read the whole Server-Sent Events answer as (event, data) pairs."""
    events: list[tuple[str, Any]] = []
    with client.stream("POST", url, json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        name = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                events.append((name, json.loads(line.removeprefix("data: "))))
    return events


def chat_usage(requests: list[RecordedRequest]) -> dict[str, int]:
    """The usage a chat turn should report: the scripted server's counts of `requests` (the
    turn's chat completions), summed."""
    prompt = sum(r.usage["prompt_tokens"] for r in requests if r.usage)
    completion = sum(r.usage["completion_tokens"] for r in requests if r.usage)
    assert all(r.usage for r in requests), "a chat completion was served without its usage"
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "llm_calls": len(requests),
    }
