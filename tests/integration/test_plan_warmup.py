"""The write plans made again after a new base's name index, on the real Neo4j + APOC: the
warm-up runs every chunk write without an error and keeps nothing it wrote."""

from __future__ import annotations

import logging
import uuid

import neo4j
import pytest

from graphrag.graph.labels import entity_label
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.graph.plan_warmup import warm_write_plans
from graphrag.settings import Settings
from tests.support.graph_data import drop_kb_graph, graph

pytestmark = pytest.mark.integration

WARMUP_LOGGER = "graphrag.graph.plan_warmup"


def _kept(driver: neo4j.Driver, kb: uuid.UUID) -> dict[str, int]:
    records, _, _ = driver.execute_query(
        f"RETURN COUNT {{ MATCH (n:{entity_label(kb)}) }} AS entities, "
        "COUNT { MATCH (c:BaseEntity {kb: $kb}) } AS bases, "
        "COUNT { MATCH (n:GraphEntity) WHERE n.name STARTS WITH 'plan warm-up' } AS warmups",
        kb=str(kb),
    )
    return dict(records[0])


def _relation_types(driver: neo4j.Driver) -> set[str]:
    records, _, _ = driver.execute_query(
        "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType"
    )
    return {r["relationshipType"] for r in records}


def test_new_base_warms_the_writes_and_keeps_nothing(
    neo4j_driver: neo4j.Driver, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    store = Neo4jGraphStore(neo4j_driver, settings.neo4j)
    kb = uuid.uuid4()
    types_before = _relation_types(neo4j_driver)
    with caplog.at_level(logging.WARNING, logger=WARMUP_LOGGER):
        store.ensure_kb_indexes(kb)
    try:
        assert [r for r in caplog.records if r.name == WARMUP_LOGGER] == []
        assert _kept(neo4j_driver, kb) == {"entities": 0, "bases": 0, "warmups": 0}
        assert _relation_types(neo4j_driver) == types_before
        # The base works as before: a chunk written after the warm-up is there.
        store.write_chunk_graph(kb, uuid.uuid4(), uuid.uuid4(), graph(("Ada", "Babbage")))
        assert _kept(neo4j_driver, kb)["entities"] == 2
    finally:
        drop_kb_graph(store, neo4j_driver, kb)


def test_a_warmup_that_fails_is_logged_not_raised(
    neo4j_driver: neo4j.Driver, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    kb = uuid.uuid4()  # no name index: awaiting it fails
    with caplog.at_level(logging.WARNING, logger=WARMUP_LOGGER):
        warm_write_plans(neo4j_driver, settings.neo4j, kb)
    assert any(str(kb) in r.getMessage() for r in caplog.records if r.name == WARMUP_LOGGER)
    assert _kept(neo4j_driver, kb) == {"entities": 0, "bases": 0, "warmups": 0}
