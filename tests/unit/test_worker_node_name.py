"""A worker's default node name comes from its queues, so two workers of one host differ."""

from __future__ import annotations

import pytest

from workers.node_name import default_node_name

pytestmark = pytest.mark.unit


def test_the_queues_make_the_name_in_the_order_given() -> None:
    assert default_node_name(["docparse", "default"]) == "docparse-default@%h"
    assert default_node_name(["graph"]) == "graph@%h"


def test_workers_on_different_queues_get_different_names() -> None:
    names = {default_node_name(q) for q in (["graph"], ["docparse", "memory"], ["memory"])}
    assert len(names) == 3


def test_a_queue_given_twice_or_blank_counts_once() -> None:
    assert default_node_name([" memory", "memory", ""]) == "memory@%h"


def test_characters_that_would_split_the_name_are_replaced() -> None:
    assert default_node_name(["a@b", "c d/e"]) == "a_b-c_d_e@%h"


def test_no_queue_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one queue"):
        default_node_name([" ", ""])
