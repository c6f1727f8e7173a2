"""`graphrag worker` picks threads sized to the LLM slots for the graph queue alone."""

from __future__ import annotations

import pytest

from graphrag.settings import Settings, get_settings
from workers.pool import choose_pool, graph_threads, sized_for_threads

pytestmark = pytest.mark.unit


def _settings(limit: int) -> Settings:
    s = get_settings()
    return s.model_copy(update={"llm": s.llm.model_copy(update={"concurrency_limit": limit})})


def _celery(per_slot: int, over_slots: int) -> Settings:
    s = get_settings()
    update = {"graph_threads_per_slot": per_slot, "graph_threads_over_slots": over_slots}
    return s.model_copy(update={"celery": s.celery.model_copy(update=update)})


def test_graph_queue_alone_runs_threads_sized_by_the_slots() -> None:
    assert choose_pool(_settings(6), ["graph"], "auto", 0) == (
        "threads",
        graph_threads(_settings(6), 6),
    )
    assert choose_pool(_settings(6), ["graph"], "auto", 3) == ("threads", 3)


@pytest.mark.parametrize(
    ("slots", "threads"),
    [(1, 4), (2, 8), (3, 11), (8, 16), (16, 24), (64, 72)],
)
def test_threads_per_slot_up_to_a_margin_over_the_slots(slots: int, threads: int) -> None:
    assert graph_threads(_celery(4, 8), slots) == threads


def test_every_slot_has_a_thread_whatever_the_margin() -> None:
    assert graph_threads(_celery(4, 0), 8) == 8
    assert graph_threads(_celery(1, 8), 8) == 8


def test_cpu_queues_keep_processes() -> None:
    assert choose_pool(_settings(6), ["docparse"], "auto", 0) == ("prefork", 0)
    assert choose_pool(_settings(6), ["graph", "docparse"], "auto", 2) == ("prefork", 2)


def test_an_explicit_pool_wins() -> None:
    assert choose_pool(_settings(4), ["graph"], "prefork", 0) == ("prefork", 0)
    threads = graph_threads(_settings(4), 4)
    assert choose_pool(_settings(4), ["memory"], "threads", 0) == ("threads", threads)


def test_a_threads_worker_has_a_connection_per_thread() -> None:
    configured = get_settings()
    threads = configured.database.pool_size + configured.neo4j.max_connection_pool_size
    sized = sized_for_threads(configured, threads)
    assert sized.database.pool_size == threads
    assert sized.neo4j.max_connection_pool_size == threads
    assert sized.database.pool_max_overflow == configured.database.pool_max_overflow
    assert sized_for_threads(configured, 1).database == configured.database
    assert sized_for_threads(configured, 0) is configured
