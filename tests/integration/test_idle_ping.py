"""Pooled connections are pinged before use only after sitting idle (`db.idle_ping`)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import OperationalError

from graphrag.db.engine import make_engine
from graphrag.settings import Settings

pytestmark = pytest.mark.integration

IDLE_S = 0.3


def _engine(settings: Settings, idle_s: float) -> Engine:
    database = settings.database.model_copy(update={"pool_size": 1, "ping_after_idle_s": idle_s})
    return make_engine(settings.model_copy(update={"database": database}))


@pytest.fixture()
def pinged_engine(settings: Settings) -> Iterator[Engine]:
    engine = _engine(settings, IDLE_S)
    yield engine
    engine.dispose()


@pytest.fixture()
def trusting_engine(settings: Settings) -> Iterator[Engine]:
    engine = _engine(settings, 3600.0)
    yield engine
    engine.dispose()


def _backend_pid(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _terminate(engine: Engine, pid: int) -> None:
    """End a backend from the server's side, as a server restart or an idle reaper would."""
    with engine.connect() as conn:
        conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        conn.commit()


def test_a_connection_used_a_moment_ago_is_not_pinged(
    pinged_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid = _backend_pid(pinged_engine)
    pings: list[DBAPIConnection] = []
    real_ping = pinged_engine.dialect.do_ping

    def counted_ping(dbapi_connection: DBAPIConnection) -> bool:
        pings.append(dbapi_connection)
        return real_ping(dbapi_connection)

    monkeypatch.setattr(pinged_engine.dialect, "do_ping", counted_ping)
    assert {_backend_pid(pinged_engine) for _ in range(5)} == {pid}, "one pooled connection"
    assert not pings
    time.sleep(IDLE_S * 2)
    assert _backend_pid(pinged_engine) == pid, "the idle connection answered and was kept"
    assert len(pings) == 1


def test_an_idle_connection_that_died_is_replaced_before_use(
    pinged_engine: Engine, engine: Engine
) -> None:
    first = _backend_pid(pinged_engine)
    _terminate(engine, first)
    time.sleep(IDLE_S * 2)
    second = _backend_pid(pinged_engine)  # no error: the ping found the dead one
    assert second != first


def test_a_death_inside_the_window_fails_one_statement_then_the_pool_recovers(
    trusting_engine: Engine, engine: Engine
) -> None:
    first = _backend_pid(trusting_engine)
    _terminate(engine, first)
    with pytest.raises(OperationalError):
        _backend_pid(trusting_engine)
    assert _backend_pid(trusting_engine) != first
