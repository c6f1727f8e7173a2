"""Session fixtures: real PostgreSQL (+pgvector), Redis, Neo4j (+APOC), a Celery worker, HTTP."""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest
from celery import Celery
from neo4j import Driver
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import make_engine, make_session_factory
from graphrag.db.migrate import upgrade_to_head
from graphrag.graph.neo4j_client import connect_driver
from graphrag.settings import Settings
from tests.support.http_server import ThreadedServer
from tests.support.services import (
    create_database,
    data_dir,
    drop_database,
    start_local_services,
    test_settings,
)
from tests.support.worker import WorkerProcess

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")


@pytest.fixture(scope="session")
def services_env() -> dict[str, str]:
    """The started services' environment (DATABASE_URL of the server, REDIS_URL, NEO4J_URI)."""
    return start_local_services(with_neo4j=True)


@pytest.fixture(scope="session")
def database_url(services_env: dict[str, str]) -> Iterator[str]:
    """A database of its own for this test session, migrated to head, dropped at the end."""
    url = create_database(services_env["DATABASE_URL"], "graphrag_test")
    yield url
    drop_database(url)


@pytest.fixture(scope="session")
def settings_env(services_env: dict[str, str], database_url: str) -> dict[str, str]:
    return {**services_env, "DATABASE_URL": database_url, "NEO4J_ENABLE": "true"}


@pytest.fixture(scope="session")
def settings(settings_env: dict[str, str]) -> Settings:
    s = test_settings(settings_env)
    upgrade_to_head(s)
    return s


@pytest.fixture(scope="session")
def engine(settings: Settings) -> Iterator[Engine]:
    eng = make_engine(settings)
    yield eng
    eng.dispose()


@pytest.fixture(scope="session")
def session_factory(engine: Engine) -> sessionmaker[Session]:
    return make_session_factory(engine)


@pytest.fixture()
def db_session(session_factory: sessionmaker[Session]) -> Iterator[Session]:
    with session_factory() as session:
        yield session


@pytest.fixture(scope="session")
def celery_app(settings: Settings) -> Celery:
    from workers.celery_app import create_celery

    return create_celery(settings)


@pytest.fixture(scope="session")
def worker(
    settings_env: dict[str, str], settings: Settings, celery_app: Celery
) -> Iterator[WorkerProcess]:
    """One real worker process on every queue for the whole session."""
    proc = WorkerProcess(settings_env, data_dir() / "test-logs" / "worker.log")
    celery_app.control.purge()
    proc.start(celery_app)
    yield proc
    proc.stop()


@pytest.fixture(scope="session")
def api_url(settings: Settings) -> Iterator[str]:
    """The real API over real HTTP on a loopback port."""
    from api.app import create_app

    with ThreadedServer(create_app(settings)) as url:
        yield url


@pytest.fixture()
def http(api_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api_url, timeout=30.0) as client:
        yield client


@pytest.fixture(scope="module")
def http_module(api_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api_url, timeout=30.0) as client:
        yield client


@pytest.fixture(scope="session")
def neo4j_driver(settings: Settings) -> Iterator[Driver]:
    """The official driver against the local Neo4j + APOC (first connection retried)."""
    driver = connect_driver(settings.neo4j)
    yield driver
    driver.close()
