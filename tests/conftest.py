"""Session fixtures: real PostgreSQL (+pgvector), Redis, Neo4j (+APOC), a Celery worker, HTTP."""

from __future__ import annotations

import random
from collections.abc import Iterator

import httpx
import pytest
import redis
from celery import Celery
from neo4j import Driver
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.keys import create_key
from graphrag.auth.models import Capability
from graphrag.db.engine import make_engine, make_session_factory, session_scope
from graphrag.db.migrate import upgrade_to_head
from graphrag.graph.neo4j_client import connect_driver
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.http_server import ThreadedServer
from tests.support.llama import llama_server
from tests.support.services import (
    create_database,
    data_dir,
    drop_database,
    start_local_services,
    test_settings,
)
from tests.support.worker import WorkerProcess

pytest_plugins = [
    "tests.fakes.fixtures",
    "tests.support.memory_fixtures",
    "tests.support.slot_server",
]


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


# Redis databases for test sessions: one picked at random per session among those no client
# is using, so that two sessions running at once (and their workers) never exchange tasks.
# Database 0 is the demo's.
TEST_REDIS_DBS = range(4, 16)


def _free_redis_db(server_url: str) -> int:
    """A test database of the Redis server that no connected client uses (any if none is)."""
    with redis.Redis.from_url(server_url) as client:
        busy = {int(c["db"]) for c in client.client_list()}
    return random.choice([db for db in TEST_REDIS_DBS if db not in busy] or list(TEST_REDIS_DBS))


# Graph retries in tests: short waits, so fault tests finish in seconds.
TEST_ENV = {
    "NEO4J_ENABLE": "true",
    "CELERY_GRAPH_RETRY_BACKOFF_S": "1",  # Celery's backoff counts whole seconds
    "LLM_TIMEOUT_S": "5",
    "LLM_MODEL": "scripted",
    "METRICS_WORKER_PORT": "0",
    # Every test client calls from 127.0.0.1: the session's bad-key tests must not lock out the
    # others. Tests of that limit run an API of their own with a small one.
    "AUTH_FAILED_MAX_PER_WINDOW": "100000",
    # Chat tests script the exact LLM calls of a turn; those of the question split
    # (tests/integration/test_chat_decompose.py, the real-model demo test) turn it on.
    "CHAT_DECOMPOSE": "false",
}


@pytest.fixture(scope="session")
def settings_env(
    services_env: dict[str, str], database_url: str, scripted_llm: ScriptedLlmServer
) -> dict[str, str]:
    """The environment of this session's processes (the API in threads, the worker process)."""
    server = services_env["REDIS_URL"].rsplit("/", 1)[0]
    redis_url = f"{server}/{_free_redis_db(server + '/0')}"
    return {
        **services_env,
        **TEST_ENV,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "LLM_BASE_URL": scripted_llm.openai_base_url,
        "EMBEDDING_BASE_URL": scripted_llm.openai_base_url,
    }


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
    from workers.queue import purge_broker

    proc = WorkerProcess(settings_env, data_dir() / "test-logs" / "worker.log")
    purge_broker(celery_app)  # stale messages go; the outbox sends this session's rows again
    proc.start(celery_app)
    yield proc
    proc.stop()


@pytest.fixture(scope="session")
def api_url(settings: Settings) -> Iterator[str]:
    """The real API over real HTTP on a loopback port."""
    from api.app import create_app

    with ThreadedServer(create_app(settings)) as url:
        yield url


@pytest.fixture(scope="session")
def admin_key(settings: Settings, session_factory: sessionmaker[Session]) -> str:
    """A key of the default tenant with every capability: the one `http` sends."""
    with session_scope(session_factory) as session:
        tenant = ensure_tenant(session, settings.api.default_tenant)
        created = create_key(
            session, settings.auth, tenant_id=tenant, name="tests", capabilities=list(Capability)
        )
    return created.key


@pytest.fixture(scope="session")
def auth_headers(admin_key: str) -> dict[str, str]:
    """Headers that authenticate as `admin_key`; pass them to any other client of the API."""
    return {"Authorization": f"Bearer {admin_key}"}


@pytest.fixture()
def http(api_url: str, auth_headers: dict[str, str]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api_url, timeout=30.0, headers=auth_headers) as client:
        yield client


@pytest.fixture(scope="module")
def http_module(api_url: str, auth_headers: dict[str, str]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api_url, timeout=30.0, headers=auth_headers) as client:
        yield client


@pytest.fixture(scope="session")
def neo4j_driver(settings: Settings) -> Iterator[Driver]:
    """The official driver against the local Neo4j + APOC (first connection retried)."""
    driver = connect_driver(settings.neo4j)
    yield driver
    driver.close()


@pytest.fixture(scope="session")
def llama_base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """OpenAI base URL of a real llama.cpp server with a small real model, for this session."""
    with llama_server(tmp_path_factory.mktemp("llama")) as url:
        yield url
