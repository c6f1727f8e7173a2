"""A worker's garbage collector: frozen start-up heap and a larger young generation."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from workers.collector import tune_collector


@pytest.fixture
def collector_restored() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("collector_restored")
def test_a_threshold_freezes_the_heap_and_spaces_the_young_collections() -> None:
    older = gc.get_threshold()[1:]
    gc.unfreeze()
    tune_collector(50_000)
    assert gc.get_threshold() == (50_000, *older)
    assert gc.get_freeze_count() > 0


@pytest.mark.usefixtures("collector_restored")
def test_zero_leaves_the_collector_as_it_is() -> None:
    gc.unfreeze()
    before = gc.get_threshold()
    tune_collector(0)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
