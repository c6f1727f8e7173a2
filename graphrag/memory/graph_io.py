"""Running the memory's Cypher: read and write transactions, bounded, errors mapped once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neo4j import READ_ACCESS, WRITE_ACCESS, Driver, ManagedTransaction, unit_of_work
from neo4j.exceptions import ServiceUnavailable, SessionExpired, TransientError

from graphrag.errors import GraphStoreError
from graphrag.settings import Neo4jSettings

__all__ = ["MemoryGraphIO", "Rows", "Statement"]

Rows = list[dict[str, Any]]
Statement = tuple[str, dict[str, Any]]

# Faults a later retry can outlive (a restart, a lost connection, a deadlock).
_UNREACHABLE = (ServiceUnavailable, SessionExpired, TransientError, OSError)


class MemoryGraphIO:
    """The process's Neo4j driver with the database name and transaction timeout to use."""

    def __init__(self, driver: Driver, settings: Neo4jSettings) -> None:
        self.driver = driver
        self.settings = settings

    def read(self, query: str, params: dict[str, Any]) -> Rows:
        """Rows of one query in a read transaction."""
        return self._run([(query, params)], write=False)[0]

    def write(self, query: str, params: dict[str, Any]) -> Rows:
        """Rows of one query in a write transaction."""
        return self._run([(query, params)], write=True)[0]

    def write_all(self, statements: Sequence[Statement]) -> list[Rows]:
        """Several queries in one write transaction: all of them happen, or none."""
        return self._run(statements, write=True)

    def schema(self, query: str, params: dict[str, Any]) -> None:
        """A schema statement (index or constraint DDL), in its own transaction."""
        try:
            self.driver.execute_query(query, params, database_=self.settings.database)
        except _UNREACHABLE as exc:
            raise GraphStoreError(f"memory schema update failed: {exc}") from exc

    def _run(self, statements: Sequence[Statement], *, write: bool) -> list[Rows]:
        @unit_of_work(timeout=self.settings.transaction_timeout_s)
        def work(tx: ManagedTransaction) -> list[Rows]:
            return [[record.data() for record in tx.run(q, p)] for q, p in statements]

        mode = WRITE_ACCESS if write else READ_ACCESS
        try:
            with self.driver.session(
                database=self.settings.database, default_access_mode=mode
            ) as session:
                return session.execute_write(work) if write else session.execute_read(work)
        except _UNREACHABLE as exc:
            action = "write" if write else "read"
            raise GraphStoreError(f"memory graph {action} failed: {exc}") from exc
