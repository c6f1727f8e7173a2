"""The API answers over real HTTP and reports each real service."""

from __future__ import annotations

import time

import httpx
import pytest
import redis

from graphrag.settings import Settings
from graphrag.worker_liveness import HEARTBEAT_PREFIX, WorkerBeat, write_heartbeat
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.worker import WorkerProcess

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


def test_system_reports_the_llm_server(
    http: httpx.Client, fresh_scripted_llm: ScriptedLlmServer, settings: Settings
) -> None:
    fresh_scripted_llm.set_script({"slots": 3, "models": ["scripted"]})
    llm = http.get("/api/v1/system").json()["llm"]
    assert llm["status"] == "ok" and llm["model"] == "scripted"
    assert llm["base_url"] == settings.llm.base_url
    assert llm["total_slots"] == 3


def test_system_lists_live_workers_and_their_queues(
    http: httpx.Client, worker: WorkerProcess, settings: Settings
) -> None:
    c = settings.celery
    deadline = time.monotonic() + c.heartbeat_ttl_s
    while True:
        workers = http.get("/api/v1/system").json()["workers"]
        names = [w["name"] for w in workers["workers"]]
        if worker.name in names or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert workers["status"] == "ok", workers
    [mine] = [w for w in workers["workers"] if w["name"] == worker.name]
    assert set(mine["queues"]) == set(c.queues)
    assert 0 <= mine["age_s"] <= c.heartbeat_ttl_s and mine["pid"] > 0
    assert workers["queues_without_worker"] == []


def test_a_silent_worker_drops_out(http: httpx.Client, settings: Settings) -> None:
    """A heartbeat older than the time to live is not a live worker (its key would be gone)."""
    ghost = f"ghost-{time.monotonic_ns()}@nowhere"
    client: redis.Redis[bytes] = redis.Redis.from_url(settings.redis.url)
    stale = time.time() - settings.celery.heartbeat_ttl_s - 5
    beat = WorkerBeat(name=ghost, queues=["nowhere"], pid=1, pool="solo", beat_at=stale)
    write_heartbeat(client, beat, ttl_s=60)
    try:
        workers = http.get("/api/v1/system").json()["workers"]
        assert ghost not in [w["name"] for w in workers["workers"]]
    finally:
        client.delete(HEARTBEAT_PREFIX + ghost)
        client.close()
