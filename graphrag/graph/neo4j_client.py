"""The Neo4j driver: one per process, sized pool, bounded lifetime, retried first connection."""

from __future__ import annotations

import logging
import time

from neo4j import Driver, GraphDatabase
from neo4j.exceptions import AuthError, ServiceUnavailable, SessionExpired

from graphrag.errors import ServiceUnavailableError
from graphrag.settings import Neo4jSettings

__all__ = ["connect_driver", "neo4j_version"]

log = logging.getLogger(__name__)


def connect_driver(settings: Neo4jSettings) -> Driver:
    """A verified driver, after up to `connect_retries` attempts `connect_retry_interval_s` apart.

    Neo4j is often still starting when the API or a worker comes up, hence the patient start.
    Wrong credentials are not retried: waiting would not fix them.
    """
    driver = GraphDatabase.driver(
        settings.uri,
        auth=(settings.username, settings.password.get_secret_value()),
        max_connection_pool_size=settings.max_connection_pool_size,
        max_connection_lifetime=settings.max_connection_lifetime_s,
        connection_timeout=settings.connection_timeout_s,
        notifications_min_severity=settings.notifications_min_severity,
    )
    for attempt in range(1, settings.connect_retries + 1):
        try:
            driver.verify_connectivity()
            return driver
        except AuthError:
            driver.close()
            raise
        except (ServiceUnavailable, SessionExpired, OSError) as exc:
            log.warning(
                "Neo4j not reachable at %s (attempt %d/%d): %s",
                settings.uri,
                attempt,
                settings.connect_retries,
                exc,
            )
            if attempt < settings.connect_retries:
                time.sleep(settings.connect_retry_interval_s)
    driver.close()
    raise ServiceUnavailableError("Neo4j did not answer", uri=settings.uri)


def neo4j_version(driver: Driver, database: str) -> str:
    """The server's version string, read with a real query."""
    records, _, _ = driver.execute_query(
        "CALL dbms.components() YIELD versions RETURN versions[0] AS version",
        database_=database,
    )
    return str(records[0]["version"])
