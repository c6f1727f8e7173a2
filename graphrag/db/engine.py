"""Engine and session factory. One engine per process, built from the settings at start."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, Executable, create_engine, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.embedded import embedded_database_url
from graphrag.db.idle_ping import ping_when_idle
from graphrag.errors import ServiceUnavailableError
from graphrag.settings import Settings

__all__ = [
    "database_url",
    "execute_alone",
    "make_engine",
    "make_session_factory",
    "session_scope",
    "wait_for_db",
]

log = logging.getLogger(__name__)


def database_url(settings: Settings) -> str:
    """The configured URL, or the embedded server's when none is set."""
    url = settings.database.url
    if not url:
        return embedded_database_url(settings.resolve(settings.database.embedded_dir))
    if url.startswith("postgresql://"):
        return url.replace("postgresql://", "postgresql+psycopg://", 1)
    return url


def make_engine(settings: Settings) -> Engine:
    """A pooled engine with a statement timeout, so no query can hold a worker forever, plans
    made for each statement's values (`database.plan_cache_mode`), and connections idle for a
    while pinged before use (`database.ping_after_idle_s`)."""
    db = settings.database
    options = (
        f"-c statement_timeout={db.statement_timeout_ms} -c plan_cache_mode={db.plan_cache_mode}"
    )
    engine = create_engine(
        database_url(settings),
        pool_size=db.pool_size,
        max_overflow=db.pool_max_overflow,
        connect_args={"options": options},
    )
    ping_when_idle(engine, db.ping_after_idle_s)
    return engine


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def wait_for_db(engine: Engine, settings: Settings) -> None:
    """Retry a real query until the database answers (start-up ordering of services)."""
    db = settings.database
    for attempt in range(1, db.connect_retries + 1):
        try:
            with engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            return
        except OperationalError as exc:
            log.warning("database not ready (attempt %d/%d): %s", attempt, db.connect_retries, exc)
            time.sleep(db.connect_retry_interval_s)
    raise ServiceUnavailableError("database did not answer", retries=db.connect_retries)


@contextmanager
def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    """A session committed on success and rolled back on any error."""
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def execute_alone(
    factory: sessionmaker[Session], statement: Executable, params: Mapping[str, Any]
) -> list[tuple[Any, ...]]:
    """The rows of one statement run as a transaction of its own, which the server commits as
    the statement ends (autocommit): no BEGIN and COMMIT round trips, for a hot path whose
    transaction would hold that one statement."""
    with factory() as session:
        connection = session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
        return [tuple(row) for row in connection.execute(statement, params)]
