"""Ping a pooled connection before use only when it has sat idle.

SQLAlchemy's `pool_pre_ping` pings on every checkout: a graph task checks a connection out two
or three times, and the ping (a round trip, with psycopg's autocommit switched on and off around
it) was a tenth of the graph worker's sampled CPU in bench/ingest_e2e.py. A connection given
back less than `database.ping_after_idle_s` ago was just working, so it is trusted; an older one
is pinged, and one that fails the ping is replaced before the caller sees it. A server that dies
within that window fails at most the statement that finds it out, after which SQLAlchemy
replaces every connection of the pool.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

__all__ = ["ping_when_idle"]

_RETURNED_AT = "graphrag_returned_at"


def ping_when_idle(engine: Engine, idle_s: float) -> None:
    """Ping a connection on checkout when it was given back more than `idle_s` ago."""
    dialect = engine.dialect

    @event.listens_for(engine, "checkin")
    def _returned(dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        record.info[_RETURNED_AT] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(
        dbapi_connection: Any, record: ConnectionPoolEntry, proxy: PoolProxiedConnection
    ) -> None:
        returned = record.info.get(_RETURNED_AT)
        if returned is None or time.monotonic() - returned < idle_s:
            return  # just opened, or working a moment ago
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as exc:
            # The pool discards this connection and checks out another (a new one if need be).
            raise DisconnectionError("pooled connection failed its ping") from exc
