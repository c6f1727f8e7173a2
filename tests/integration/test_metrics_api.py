"""The API's Prometheus endpoint: for `read` keys unless `api.metrics_public`, with the queue
depths and LLM series."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.support.auth_helpers import bearer, make_key
from tests.support.http_server import ThreadedServer

pytestmark = pytest.mark.integration


def test_metrics_carry_queue_and_llm_series(http: httpx.Client, settings: Settings) -> None:
    response = http.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    for queue in (settings.celery.docparse_queue, settings.celery.graph_queue):
        assert f'graphrag_queue_depth{{queue="{queue}"}}' in text
    assert "# TYPE graphrag_llm_request_seconds histogram" in text
    assert "# TYPE graphrag_llm_tokens_total counter" in text


def test_metrics_need_a_read_key_by_default(
    api_url: str, settings: Settings, session_factory: sessionmaker[Session]
) -> None:
    assert not settings.api.metrics_public
    writer = make_key(session_factory, settings, "default", [Capability.WRITE], name="metrics")
    reader = make_key(session_factory, settings, "default", [Capability.READ], name="metrics")
    assert httpx.get(f"{api_url}/metrics").status_code == 401
    assert httpx.get(f"{api_url}/metrics", headers=bearer(writer.key)).status_code == 403
    assert httpx.get(f"{api_url}/metrics", headers=bearer(reader.key)).status_code == 200


def test_public_metrics_need_no_key(settings: Settings) -> None:
    from api.app import create_app

    public = settings.model_copy(
        update={"api": settings.api.model_copy(update={"metrics_public": True})}
    )
    with ThreadedServer(create_app(public)) as url:
        response = httpx.get(f"{url}/metrics")
        assert response.status_code == 200, response.text
        assert "graphrag_queue_depth" in response.text
        # The other routes still need their key.
        assert httpx.get(f"{url}/api/v1/system").status_code == 401


def test_system_names_the_llm_server_and_its_slots(http: httpx.Client, settings: Settings) -> None:
    llm = http.get("/api/v1/system").json()["llm"]
    assert llm["status"] == "ok"
    served = httpx.get(f"{settings.llm.base_url}/models").json()["data"][0]["id"]
    assert llm["base_url"] == settings.llm.base_url
    assert llm["model"] == served  # what the server says it serves
    # The session's scripted server does not describe its slots: the fallback applies.
    assert llm["total_slots"] is None
    assert llm["slot_limit"] == settings.llm.concurrency_fallback
