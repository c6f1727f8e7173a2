"""A Neo4j server that does not answer is one `GraphStoreError`, whatever the store was doing.

The real driver is pointed at a loopback port nothing listens on: every statement of the graph
store and of the memory's schema goes through the one transaction helper and its one mapping.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import neo4j
import pytest

from graphrag.errors import GraphStoreError
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.memory.graph_io import MemoryGraphIO
from graphrag.settings import Settings
from tests.support.http_server import free_port

pytestmark = pytest.mark.integration

# The driver gives up at once instead of retrying the lost server for its default 30 s.
NO_RETRY_S = 0.0
CONNECT_TIMEOUT_S = 1.0

KB, DOC = uuid.uuid4(), uuid.uuid4()


@pytest.fixture
def dead_driver(settings: Settings) -> Iterator[neo4j.Driver]:
    driver = neo4j.GraphDatabase.driver(
        f"bolt://127.0.0.1:{free_port()}",
        auth=(settings.neo4j.username, settings.neo4j.password.get_secret_value()),
        connection_timeout=CONNECT_TIMEOUT_S,
        max_transaction_retry_time=NO_RETRY_S,
    )
    yield driver
    driver.close()


STORE_CALLS: dict[str, Callable[[Neo4jGraphStore], object]] = {
    "ensure_schema": lambda store: store.ensure_schema(),
    "ensure_kb_indexes": lambda store: store.ensure_kb_indexes(KB),
    "document_counts": lambda store: store.document_counts(DOC),
    "delete_document": lambda store: store.delete_document(KB, DOC),
    "delete_knowledge_base": lambda store: store.delete_knowledge_base(KB),
    "set_key_vectors": lambda store: store.set_key_vectors(KB, {"alpha": [0.5]}),
}


@pytest.mark.parametrize("call", STORE_CALLS.values(), ids=list(STORE_CALLS))
def test_a_store_call_on_a_dead_server_is_a_graph_store_error(
    dead_driver: neo4j.Driver, settings: Settings, call: Callable[[Neo4jGraphStore], object]
) -> None:
    with pytest.raises(GraphStoreError, match="failed"):
        call(Neo4jGraphStore(dead_driver, settings.neo4j))


def test_a_memory_schema_statement_on_a_dead_server_is_a_graph_store_error(
    dead_driver: neo4j.Driver, settings: Settings
) -> None:
    io = MemoryGraphIO(dead_driver, settings.neo4j)
    with pytest.raises(GraphStoreError, match="memory schema update failed"):
        io.schema("CREATE INDEX unreachable_probe IF NOT EXISTS FOR (n:Probe) ON (n.x)", {})
