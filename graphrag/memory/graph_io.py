"""Running the memory's Cypher: read and write transactions, bounded, errors mapped once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neo4j import Driver

from graphrag.graph.neo4j_tx import Rows, Statement, run_statements
from graphrag.settings import Neo4jSettings

__all__ = ["MemoryGraphIO", "Rows", "Statement"]


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
        statement = (query, params)
        run_statements(
            self.driver, self.settings, [statement], write=True, action="memory schema update"
        )

    def _run(self, statements: Sequence[Statement], *, write: bool) -> list[Rows]:
        action = "memory graph write" if write else "memory graph read"
        return run_statements(self.driver, self.settings, statements, write=write, action=action)
