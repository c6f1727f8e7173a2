"""A document's graph plan: the selected chunks within the budget, the rest skipped with why."""

from __future__ import annotations

from uuid import UUID

import pytest

from graphrag.db.enums import GraphStatus, StageStatus
from graphrag.ingest.graph.plan import GraphCandidate, over_graph_budget, plan_graph
from graphrag.ingest.models import ChunkType

pytestmark = pytest.mark.unit

IMG = "![figure](images/f.png)"


def text_chunk(
    seq: int, status: GraphStatus = GraphStatus.SKIPPED, content: str = ""
) -> GraphCandidate:
    body = content or f"Paragraph {seq} names Acme and Lyon."
    return GraphCandidate(UUID(int=seq + 1), seq, ChunkType.TEXT.value, body, None, status)


def test_the_selected_chunks_within_the_budget_are_extracted_in_order() -> None:
    chunks = [text_chunk(0), text_chunk(1, content=IMG), text_chunk(2), text_chunk(3)]
    plan = plan_graph(chunks, cap=2)
    assert plan.extract == [UUID(int=1), UUID(int=3)]
    assert plan.over_budget == [UUID(int=4)]
    assert plan.reason == over_graph_budget(2)
    stage = plan.stage
    assert (stage.status, stage.total, stage.skipped, stage.detail) == (
        StageStatus.RUNNING,
        2,
        1,
        over_graph_budget(2),
    )


def test_done_chunks_are_not_sent_again_and_failed_ones_are_counted_as_retried() -> None:
    chunks = [
        text_chunk(0, GraphStatus.DONE),
        text_chunk(1, GraphStatus.FAILED),
        text_chunk(2, GraphStatus.SKIPPED),
    ]
    plan = plan_graph(chunks, cap=10)
    assert plan.extract == [UUID(int=2), UUID(int=3)]
    assert plan.retried_failures == 1
    assert plan.over_budget == []
    assert plan.stage.detail is None


def test_no_chunk_for_the_graph_skips_the_stage() -> None:
    plan = plan_graph([], cap=10)
    assert (plan.extract, plan.over_budget, plan.retried_failures) == ([], [], 0)
    assert (plan.stage.status, plan.stage.total, plan.stage.skipped) == (StageStatus.SKIPPED, 0, 0)
