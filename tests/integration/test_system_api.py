"""The API answers over real HTTP and reports each real service."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.integration


def test_health(http: httpx.Client) -> None:
    response = http.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_system_reports_each_service(http: httpx.Client) -> None:
    body = http.get("/api/v1/system").json()
    assert body["graph_database_engine"] == "Neo4j"
    assert body["database"]["status"] == "ok"
    assert body["database"]["version"].startswith("PostgreSQL 18")
    assert "pgvector 0." in body["database"]["version"]
    assert body["redis"]["status"] == "ok"
    assert body["graph"] == {"status": "ok", "version": body["graph"]["version"], "detail": None}
    assert body["graph"]["version"].startswith("Neo4j 5.26")
    assert set(body["outbox"]) == {"unsent", "in_flight", "failed"}
    assert all(isinstance(n, int) and n >= 0 for n in body["outbox"].values())


def test_unknown_route_is_a_json_error(http: httpx.Client) -> None:
    response = http.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
