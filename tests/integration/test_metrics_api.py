"""The API's Prometheus endpoint: open without a key, with the queue depths and LLM series."""

from __future__ import annotations

import httpx
import pytest

from graphrag.settings import Settings

pytestmark = pytest.mark.integration


def test_metrics_carry_queue_and_llm_series(api_url: str, settings: Settings) -> None:
    response = httpx.get(f"{api_url}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    for queue in (settings.celery.docparse_queue, settings.celery.graph_queue):
        assert f'graphrag_queue_depth{{queue="{queue}"}}' in text
    assert "# TYPE graphrag_llm_request_seconds histogram" in text
    assert "# TYPE graphrag_llm_tokens_total counter" in text


def test_system_names_the_llm_server_and_its_slots(http: httpx.Client, settings: Settings) -> None:
    llm = http.get("/api/v1/system").json()["llm"]
    assert llm["status"] == "ok"
    served = httpx.get(f"{settings.llm.base_url}/models").json()["data"][0]["id"]
    assert llm["base_url"] == settings.llm.base_url
    assert llm["model"] == served  # what the server says it serves
    # The session's scripted server does not describe its slots: the fallback applies.
    assert llm["total_slots"] is None
    assert llm["slot_limit"] == settings.llm.concurrency_fallback
