"""The first connection to Neo4j is retried `connect_retries` times, `connect_retry_interval_s`
apart (the specification: 30 x 2 s), with the real driver: against a port where nothing ever
listens, and against one where the server comes up after a few seconds."""

from __future__ import annotations

import logging
import time
from urllib.parse import urlsplit

import pytest

from graphrag.errors import ServiceUnavailableError
from graphrag.graph.neo4j_client import connect_driver, neo4j_version
from graphrag.settings import Neo4jSettings, Settings, get_settings
from tests.support.http_server import free_port
from tests.support.late_relay import LateRelay

pytestmark = pytest.mark.integration

RETRIES = 3
INTERVAL_S = 0.2
COMES_UP_AFTER_S = 2.0
PATIENT_RETRIES = 30
UNREACHABLE = "Neo4j not reachable"


def _attempts(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(UNREACHABLE)]


def _neo4j(settings: Settings, port: int, retries: int) -> Neo4jSettings:
    return settings.neo4j.model_copy(
        update={
            "uri": f"bolt://127.0.0.1:{port}",
            "connect_retries": retries,
            "connect_retry_interval_s": INTERVAL_S,
            "connection_timeout_s": 1.0,
        }
    )


def test_the_specified_start_up_patience() -> None:
    # 30 tries 2 s apart: the defaults wait a minute for a server that is starting.
    neo4j = get_settings().neo4j
    assert (neo4j.connect_retries, neo4j.connect_retry_interval_s) == (30, 2.0)


def test_a_closed_port_is_tried_each_time_then_unavailable(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphrag.graph.neo4j_client")
    start = time.monotonic()
    with pytest.raises(ServiceUnavailableError, match="Neo4j did not answer"):
        connect_driver(_neo4j(settings, free_port(), RETRIES))
    assert [m.split("(attempt ")[1].split(")")[0] for m in _attempts(caplog)] == [
        f"{n}/{RETRIES}" for n in range(1, RETRIES + 1)
    ]
    # The waits happened between the attempts (none after the last).
    assert time.monotonic() - start >= (RETRIES - 1) * INTERVAL_S


def test_a_server_that_comes_up_late_is_waited_for(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphrag.graph.neo4j_client")
    real = urlsplit(settings.neo4j.uri)
    target = (real.hostname or "127.0.0.1", real.port or 7687)
    port = free_port()
    with LateRelay(port, target, COMES_UP_AFTER_S):
        driver = connect_driver(_neo4j(settings, port, PATIENT_RETRIES))
        try:
            assert neo4j_version(driver, settings.neo4j.database).startswith("5.")
        finally:
            driver.close()
    tries = len(_attempts(caplog))
    assert 1 <= tries < PATIENT_RETRIES  # refused while down, connected once it listened


@pytest.mark.parametrize(("severity", "noted"), [("OFF", False), ("WARNING", True)])
def test_query_notifications_reach_the_driver_only_when_asked_for(
    settings: Settings, severity: str, noted: bool
) -> None:
    # A property key no node has ever held draws the server's UnknownPropertyKeyWarning.
    neo4j = settings.neo4j.model_copy(update={"notifications_min_severity": severity})
    driver = connect_driver(neo4j)
    try:
        _, summary, _ = driver.execute_query(
            "MATCH (n:GraphEntity) WHERE n.key_no_node_has_held = 1 RETURN n",
            database_=neo4j.database,
        )
    finally:
        driver.close()
    codes = [n["code"] for n in summary.notifications or []]
    assert ("Neo.ClientNotification.Statement.UnknownPropertyKeyWarning" in codes) is noted
