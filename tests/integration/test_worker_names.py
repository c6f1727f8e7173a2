"""Two workers of the README's layout on one host, started without `--name`: each gets a node
name from its queues, so `/api/v1/system` lists both and every queue has a worker. Two processes
that do share a name are reported, not silently merged."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from graphrag.worker_liveness import HEARTBEAT_PREFIX, HeartbeatLoop, WorkerBeat, read_workers
from tests.support.auth_helpers import bearer, make_key
from tests.support.http_server import ThreadedServer
from tests.support.isolated_worker import on_own_queues, own_database
from tests.support.services import data_dir
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration

HTTP_TIMEOUT_S = 30.0
BEAT_S = 0.1  # the shared-name test's heartbeat interval: a few beats in well under a second


@pytest.fixture()
def own_api(
    settings: Settings, settings_env: dict[str, str], services_env: dict[str, str]
) -> Iterator[tuple[Settings, dict[str, str], httpx.Client]]:
    """An API on queues and a database of the test's own: its `/system` counts those queues."""
    from api.app import create_app

    moved, env = on_own_queues(settings, settings_env)
    with own_database(services_env["DATABASE_URL"], moved, env) as (own, env, sessions):
        key = make_key(sessions, own, own.api.default_tenant, [Capability.READ]).key
        with (
            ThreadedServer(create_app(own)) as url,
            httpx.Client(base_url=url, headers=bearer(key), timeout=HTTP_TIMEOUT_S) as http,
        ):
            yield own, env, http


def test_two_workers_of_one_host_keep_their_own_names(
    own_api: tuple[Settings, dict[str, str], httpx.Client],
) -> None:
    from workers.celery_app import create_celery

    own, env, http = own_api
    c = own.celery
    host = socket.gethostname()
    logs = data_dir() / "test-logs"
    # Between them the two workers take every queue, so none is reported without a worker
    # whichever other workers the session runs.
    parse_queues = [c.docparse_queue, c.default_queue, c.eval_queue]
    parse = WorkerProcess(env, logs / "worker-names-parse.log", 1, parse_queues, True)
    graph = WorkerProcess(
        env, logs / "worker-names-graph.log", 1, [c.graph_queue, c.memory_queue], True
    )
    celery = create_celery(own)
    started: list[WorkerProcess] = []
    try:
        for proc in (parse, graph):
            proc.start(celery)  # waits for a ping answered by the expected node name
            started.append(proc)
        expected = {
            f"{c.docparse_queue}-{c.default_queue}-{c.eval_queue}@{host}",
            f"{c.graph_queue}-{c.memory_queue}@{host}",
        }
        assert {parse.name, graph.name} == expected
        deadline = time.monotonic() + c.heartbeat_ttl_s
        while True:
            workers = http.get("/api/v1/system").json()["workers"]
            mine = {w["name"]: w for w in workers["workers"] if w["name"] in expected}
            if len(mine) == len(expected) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert set(mine) == expected, workers
        assert set(mine[parse.name]["queues"]) == set(parse_queues)
        assert set(mine[graph.name]["queues"]) == {c.graph_queue, c.memory_queue}
        assert mine[parse.name]["pid"] != mine[graph.name]["pid"]
        assert workers["queues_without_worker"] == []
        assert workers["shared_names"] == []
    finally:
        for proc in started:
            proc.stop()


def test_two_processes_beating_under_one_name_are_reported(
    tmp_path: Path, settings: Settings
) -> None:
    c = settings.celery.model_copy(update={"heartbeat_interval_s": BEAT_S})
    client: redis.Redis[bytes] = redis.Redis.from_url(settings.redis.url)
    name = f"shared-{time.monotonic_ns()}@{socket.gethostname()}"
    loops = [
        HeartbeatLoop(
            client,
            c,
            WorkerBeat(name=name, queues=["q"], pid=pid, pool="prefork", beat_at=0.0),
        )
        for pid in (os.getpid(), os.getpid() + 1)  # the pid each process would write
    ]
    for loop in loops:
        loop.start()
    try:
        deadline = time.monotonic() + c.heartbeat_ttl_s
        while True:
            seen = read_workers(client, c, ["q"])
            if seen.shared_names or time.monotonic() > deadline:
                break
            time.sleep(BEAT_S)
        assert seen.shared_names == [name]
        [beat] = [w for w in seen.workers if w.name == name]
        assert beat.name_shared_with in ([os.getpid()], [os.getpid() + 1])
        assert beat.name_shared_with != [beat.pid]
    finally:
        for loop in loops:
            loop.stop()
        client.delete(HEARTBEAT_PREFIX + name)
        client.close()
