"""A heavy upload never freezes the API: `/health` keeps answering while it is sniffed.

The upload is 24 MB of crafted text: repeated `<!---->` comments (a 183-byte run of them used to
take 9 s in the HTML sniffer's regex, doubling with each repeat, holding the GIL) and a byte that
is not UTF-8 (so the whole text is decoded twice, the second time as Windows-1252). Its name
claims a PDF, so after the full sniff and decode it is refused (415) and nothing is stored.
The route runs in the thread pool and the sniff is a linear scan: meanwhile `/health`, served
over real HTTP by the same API process, answers every probe. The API runs in a process of its
own (`graphrag serve`), so a frozen API fails the test instead of freezing it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.api_helpers import create_kb, upload
from tests.support.api_process import api_process

pytestmark = pytest.mark.e2e

CRAFTED = b"<!---->" * (24 * 1024 * 1024 // 7) + b"\xe9"
HEALTH_TIMEOUT_S = 10.0  # one probe; a frozen API never answers at all
UPLOAD_TIMEOUT_S = 300.0
PROBE_PAUSE_S = 0.05


@pytest.fixture()
def own_api(settings_env: dict[str, str]) -> Iterator[str]:
    """`graphrag serve` in a subprocess on the session's services; its URL once it answers."""
    with api_process(settings_env) as url:
        yield url


def test_health_answers_while_a_crafted_upload_is_sniffed(
    own_api: str, auth_headers: dict[str, str]
) -> None:
    api_url = own_api
    with httpx.Client(base_url=api_url, headers=auth_headers, timeout=30.0) as http:
        kb = create_kb(http)
    result: dict[str, Any] = {}

    def send() -> None:
        with httpx.Client(base_url=api_url, headers=auth_headers, timeout=UPLOAD_TIMEOUT_S) as c:
            result["response"] = upload(c, kb["id"], "crafted.pdf", CRAFTED, "application/pdf")

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    probes: list[int] = []
    with httpx.Client(base_url=api_url, timeout=HEALTH_TIMEOUT_S) as probe:
        while sender.is_alive():
            try:
                probes.append(probe.get("/health").status_code)
            except httpx.TimeoutException:
                pytest.fail(f"/health did not answer within {HEALTH_TIMEOUT_S} s during the upload")
            time.sleep(PROBE_PAUSE_S)
    sender.join()
    response: httpx.Response = result["response"]
    assert response.status_code == 415, response.text
    assert response.json()["error"]["code"] == "unsupported_media_type"
    assert probes and set(probes) == {200}, probes
    with httpx.Client(base_url=api_url, headers=auth_headers, timeout=30.0) as http:
        listed = http.get(f"/api/v1/knowledge-bases/{kb['id']}/knowledge").json()
    assert listed["total"] == 0
