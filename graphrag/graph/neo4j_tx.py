"""Running Cypher on the process's driver: the one transaction helper and the fault lists.

The graph store and the agent memory both go through here, so a transaction is bounded the same
way (`neo4j.transaction_timeout_s`), retried by the driver on transient faults the same way, and
an unreachable server is reported as the same `GraphStoreError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from neo4j import READ_ACCESS, WRITE_ACCESS, Driver, ManagedTransaction, unit_of_work
from neo4j.exceptions import ClientError, ServiceUnavailable, SessionExpired, TransientError

from graphrag.errors import GraphStoreError
from graphrag.settings import Neo4jSettings

__all__ = ["REJECTED", "UNREACHABLE", "Rows", "Statement", "run_statements", "run_transaction"]

# Faults that a later retry can outlive (a restart, a lost connection, a deadlock).
UNREACHABLE = (ServiceUnavailable, SessionExpired, TransientError, OSError)
# Faults of the data itself (a refused statement or constraint, text the driver cannot encode):
# running the same statement again fails the same way.
REJECTED = (ClientError, UnicodeError)

Rows = list[dict[str, Any]]
Statement = tuple[str, dict[str, Any]]

T = TypeVar("T")


def run_transaction(
    driver: Driver,
    settings: Neo4jSettings,
    work: Callable[[ManagedTransaction], T],
    *,
    write: bool,
    action: str,
    timeout_s: float | None = None,
) -> T:
    """`work` in one managed transaction bounded by the transaction timeout (or `timeout_s`,
    a tighter budget of its own); an unreachable server raises
    `GraphStoreError("<action> failed: ...")`."""
    limit = settings.transaction_timeout_s if timeout_s is None else timeout_s
    bounded = unit_of_work(timeout=limit)(work)
    mode = WRITE_ACCESS if write else READ_ACCESS
    try:
        with driver.session(database=settings.database, default_access_mode=mode) as session:
            return session.execute_write(bounded) if write else session.execute_read(bounded)
    except UNREACHABLE as exc:
        raise GraphStoreError(f"{action} failed: {exc}") from exc


def run_statements(
    driver: Driver,
    settings: Neo4jSettings,
    statements: Sequence[Statement],
    *,
    write: bool,
    action: str,
    timeout_s: float | None = None,
) -> list[Rows]:
    """The rows of each statement, all run in one transaction (all of them happen, or none)."""

    def work(tx: ManagedTransaction) -> list[Rows]:
        return [[record.data() for record in tx.run(q, p)] for q, p in statements]

    return run_transaction(driver, settings, work, write=write, action=action, timeout_s=timeout_s)
