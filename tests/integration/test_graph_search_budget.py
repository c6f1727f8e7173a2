"""A graph search's scan of entity names has a time budget: past it Neo4j stops the query and
the API answers 503 `graph_search_timeout`, never a 500 or a wait without end."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from neo4j import Driver

from graphrag.graph.labels import entity_label
from graphrag.settings import Settings
from tests.support.api_helpers import create_kb
from tests.support.graph_helpers import remove_label
from tests.support.http_server import ThreadedServer

pytestmark = pytest.mark.integration

NODES = 100_000
TINY_BUDGET_S = 0.001
HEALTH_S = 1.0


def _fill(driver: Driver, label: str) -> None:
    """`NODES` entities under the base's label, written in Neo4j's own batches."""
    with driver.session() as session:
        session.run(
            f"UNWIND range(1, $n) AS i CALL (i) {{ CREATE (:{label} "
            "{name: 'entity number ' + i, kg: 'bulk', chunks: []}) } IN TRANSACTIONS OF 20000 ROWS",
            n=NODES,
        ).consume()


def _empty(driver: Driver, label: str) -> None:
    with driver.session() as session:
        session.run(
            f"MATCH (n:{label}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 20000 ROWS"
        ).consume()


@pytest.fixture()
def budgeted(settings: Settings, auth_headers: dict[str, str]) -> Iterator[httpx.Client]:
    """An API whose graph searches may scan names for a millisecond only."""
    from api.app import create_app

    limits = settings.graph_search.model_copy(update={"match_timeout_s": TINY_BUDGET_S})
    app = create_app(settings.model_copy(update={"graph_search": limits}))
    with (
        ThreadedServer(app) as url,
        httpx.Client(base_url=url, timeout=60.0, headers=auth_headers) as client,
    ):
        yield client


def test_a_name_scan_past_its_budget_is_a_503(
    http: httpx.Client, budgeted: httpx.Client, neo4j_driver: Driver
) -> None:
    kb = create_kb(
        http,
        indexing={"graph_enabled": True},
        extract_config={"enabled": True, "tags": ["thing"]},
    )
    label = entity_label(kb["id"])
    _fill(neo4j_driver, label)
    try:
        body: dict[str, Any] = {"entity": "number 1"}
        route = f"/api/v1/knowledge-bases/{kb['id']}/graph-search"
        stopped = budgeted.post(route, json=body)
        assert stopped.status_code == 503, stopped.text
        assert stopped.json()["error"]["code"] == "graph_search_timeout"
        started = time.monotonic()
        assert budgeted.get("/health").status_code == 200
        assert time.monotonic() - started < HEALTH_S
        # The same search within the default budget answers (the names exist, without chunks).
        answered = http.post(route, json=body)
        assert answered.status_code == 200, answered.text
    finally:
        _empty(neo4j_driver, label)
        remove_label(neo4j_driver, kb["id"])
