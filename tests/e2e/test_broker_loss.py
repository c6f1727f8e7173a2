"""The broker is lost, then comes back empty: documents still all complete, each graph equal to a
clean run's, because their tasks were outbox rows in PostgreSQL all along.

Each test runs its own redis-server (own port and directory, no persistence), its own database,
worker and API, so taking the broker away never touches the services other tests share.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from celery import Celery
from neo4j import Driver

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.e2e.test_graph_build import document_text, graph_kb, script_extractions
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import upload, wait_terminal
from tests.support.auth_helpers import bearer, make_key
from tests.support.graph_helpers import graph_nodes, graph_relations, remove_label
from tests.support.http_server import ThreadedServer
from tests.support.isolated_worker import own_database
from tests.support.own_redis import OwnRedis
from tests.support.services import data_dir
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

log = logging.getLogger(__name__)

DOCS = 50
# This test's outbox visibility timeout: far below production's, yet above the queue waits of a
# loaded machine, so what the test measures is the broker-epoch path (queued work lost with the
# broker is sent again as soon as it answers), not this timeout.
VISIBILITY_S = 60
LLM_DELAY_S = 0.05  # each extraction takes a little while, so the run is caught mid-way
STARTED_DOCS = 5  # the broker is lost once this many documents are completed
DOWN_S = 2.0  # how long the broker stays away
# Generous bound on the normal processing of the whole run on two shared cores.
PROCESSING_BUDGET_S = 300.0
HTTP_TIMEOUT_S = 30.0


@dataclass
class _Stack:
    http: httpx.Client
    broker: OwnRedis
    worker: WorkerProcess
    celery: Celery

    def revive_worker(self) -> None:
        """Start the worker again if the broker's loss killed it, as a supervisor would:
        Celery's consumer can die restoring unacknowledged messages to a broker already gone
        (kombu's Redis channel, `'NoneType' object has no attribute 'hostname'`)."""
        proc = self.worker.proc
        if proc is not None and proc.poll() is not None:
            log.warning(
                "the worker died with the broker (exit %s); starting it again", proc.returncode
            )
            self.worker.kill()  # reaps it and closes its log
            self.worker.start(self.celery)

    def wait_terminal(self, ids: list[str], timeout_s: float) -> list[dict[str, Any]]:
        """Every document once terminal, in order; the worker is revived whenever it has died
        meanwhile (its consumer can also die reconnecting, after the broker is back)."""
        deadline = time.monotonic() + timeout_s
        return [
            wait_terminal(self.http, i, deadline - time.monotonic(), each_poll=self.revive_worker)
            for i in ids
        ]


def _own_settings(settings: Settings, redis_url: str) -> Settings:
    redis = settings.redis.model_copy(update={"url": redis_url})
    outbox = settings.outbox.model_copy(update={"visibility_timeout_s": VISIBILITY_S})
    return settings.model_copy(update={"redis": redis, "outbox": outbox})


@pytest.fixture()
def stack(
    tmp_path: Path, settings: Settings, settings_env: dict[str, str], services_env: dict[str, str]
) -> Iterator[_Stack]:
    from api.app import create_app
    from workers.celery_app import create_celery

    broker = OwnRedis(tmp_path / "redis")
    broker.start()
    env = {
        **settings_env,
        "REDIS_URL": broker.url,
        "OUTBOX_VISIBILITY_TIMEOUT_S": str(VISIBILITY_S),
    }
    moved = _own_settings(settings, broker.url)
    with own_database(services_env["DATABASE_URL"], moved, env) as (own, env, sessions):
        key = make_key(sessions, own, own.api.default_tenant, list(Capability)).key
        worker = WorkerProcess(env, data_dir() / "test-logs" / "worker-broker-loss.log")
        celery = create_celery(own)
        worker.start(celery)
        try:
            with (
                ThreadedServer(create_app(own)) as url,
                httpx.Client(base_url=url, headers=bearer(key), timeout=HTTP_TIMEOUT_S) as http,
            ):
                yield _Stack(http, broker, worker, celery)
        finally:
            worker.stop()
            broker.stop()


def _graph(driver: Driver, doc_id: str) -> tuple[dict[str, Any], set[tuple[str, str, str]]]:
    nodes = graph_nodes(driver, doc_id)
    shape = {n: (sorted(v["attributes"]), len(v["chunks"])) for n, v in nodes.items()}
    return shape, graph_relations(driver, doc_id)


def _completed(http: httpx.Client, kb_id: str) -> int:
    page = http.get(
        f"/api/v1/knowledge-bases/{kb_id}/knowledge", params={"status": "completed"}
    ).json()
    return int(page["total"])


def _backlog(http: httpx.Client) -> dict[str, int]:
    outbox: dict[str, int] = http.get("/api/v1/system").json()["outbox"]
    return outbox


def _drained(http: httpx.Client, timeout_s: float = 30.0) -> dict[str, int]:
    """The backlog once it is empty (each completed document's entity resolution is a task of
    its own, run after the document completes), or as it stands at the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        backlog = _backlog(http)
        if not any(backlog.values()) or time.monotonic() > deadline:
            return backlog
        time.sleep(0.2)


def test_broker_lost_mid_run_every_document_completes_once(
    stack: _Stack, fresh_scripted_llm: ScriptedLlmServer, neo4j_driver: Driver
) -> None:
    http = stack.http
    slow = {"delay_s": LLM_DELAY_S}
    script_extractions(fresh_scripted_llm, ALPHA=slow, BRAVO=slow, CHARLIE=slow)
    kb = graph_kb(http)
    clean = wait_terminal(
        http, upload(http, kb["id"], "clean.md", document_text().encode()).json()["id"]
    )
    assert clean["parse_status"] == "completed" and clean["failed_chunk_count"] == 0
    uploads = [upload(http, kb["id"], f"doc-{i}.md", document_text().encode()) for i in range(DOCS)]
    assert [r.status_code for r in uploads] == [202] * DOCS
    ids = [r.json()["id"] for r in uploads]

    deadline = time.monotonic() + PROCESSING_BUDGET_S
    while _completed(http, kb["id"]) < STARTED_DOCS + 1:  # + the clean one
        assert time.monotonic() < deadline, "the run never got going"
        time.sleep(0.1)
    stack.broker.lose()
    at_loss = _completed(http, kb["id"]) - 1
    time.sleep(DOWN_S)
    stack.broker.start()
    back = time.monotonic()
    docs = stack.wait_terminal(ids, timeout_s=VISIBILITY_S + PROCESSING_BUDGET_S)
    recovery_s = time.monotonic() - back
    log.warning(
        "broker loss: %d/%d documents completed at the loss; all terminal %.1f s after the broker "
        "came back (visibility timeout %d s)",
        at_loss,
        DOCS,
        recovery_s,
        VISIBILITY_S,
    )
    assert at_loss < DOCS, "the broker was lost after the run had ended"
    assert [d["parse_status"] for d in docs] == ["completed"] * DOCS
    assert [d["failed_chunk_count"] for d in docs] == [0] * DOCS
    expected = _graph(neo4j_driver, clean["id"])
    for doc in docs:
        assert _graph(neo4j_driver, doc["id"]) == expected, doc["id"]
        assert (doc["entity_count"], doc["relation_count"]) == (
            clean["entity_count"],
            clean["relation_count"],
        )
    assert _drained(http) == {"unsent": 0, "in_flight": 0, "failed": 0}
    remove_label(neo4j_driver, kb["id"])


def test_uploads_while_the_broker_is_down_complete_once_it_returns(
    stack: _Stack, fresh_scripted_llm: ScriptedLlmServer, neo4j_driver: Driver
) -> None:
    http = stack.http
    script_extractions(fresh_scripted_llm)
    kb = graph_kb(http)
    stack.broker.lose()
    uploads = [upload(http, kb["id"], f"down-{i}.md", document_text().encode()) for i in range(3)]
    assert [r.status_code for r in uploads] == [202] * 3
    system = http.get("/api/v1/system").json()
    assert system["redis"]["status"] == "down"
    assert system["outbox"]["unsent"] >= len(uploads)
    assert {r.json()["parse_status"] for r in uploads} == {"pending"}

    stack.broker.start()
    docs = stack.wait_terminal([r.json()["id"] for r in uploads], timeout_s=PROCESSING_BUDGET_S)
    assert [d["parse_status"] for d in docs] == ["completed"] * 3
    assert [d["failed_chunk_count"] for d in docs] == [0] * 3
    assert {d["entity_count"] for d in docs} == {5}
    assert _drained(http) == {"unsent": 0, "in_flight": 0, "failed": 0}
    remove_label(neo4j_driver, kb["id"])
