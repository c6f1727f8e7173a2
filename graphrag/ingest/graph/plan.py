"""The graph plan of one document: which of its chunks go to extraction, within its budget.

Both paths that send a document's chunks to the graph make it here, from the same typed rows:
a document's indexing (`ingest.processing`, from the chunks it is about to insert) and a base
whose graph is switched on (`ingest.graph.switch`, from the stored chunks). The chunks that take
part are chosen by `ingest.graph.selection`; at most `ingest.graph_max_chunks` of them, in
document order, are extracted, and the ones beyond are skipped with the reason. A chunk whose
graph is already `done` is not sent again. The caller marks the chunks as planned and hands
`extract` to `db.lifecycle`, which writes one `graph.extract_chunk` task per chunk in the same
transaction as the document's status change.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from graphrag.db.enums import GraphStatus, StageStatus
from graphrag.ingest.graph.selection import select_graph_chunks
from graphrag.ingest.schemas import StageProgress

__all__ = ["GraphCandidate", "GraphPlan", "over_graph_budget", "plan_graph"]


class GraphCandidate(NamedTuple):
    """What the plan reads of a chunk (the columns of its row, in this order)."""

    id: uuid.UUID
    seq: int
    chunk_type: str
    content: str
    parent_chunk_id: uuid.UUID | None
    graph_status: GraphStatus


@dataclass(frozen=True)
class GraphPlan:
    """The chunks of one document sent to extraction, and those the budget left out."""

    extract: list[uuid.UUID]  # in document order, at most the budget
    over_budget: list[uuid.UUID]  # selected but beyond the budget: skipped with `reason`
    retried_failures: int  # chunks of `extract` whose extraction had failed before
    reason: str  # why the `over_budget` chunks got no extraction

    @property
    def stage(self) -> StageProgress:
        """The document's `graph` stage as the plan starts it."""
        over = len(self.over_budget)
        return StageProgress(
            status=StageStatus.RUNNING if self.extract else StageStatus.SKIPPED,
            total=len(self.extract),
            skipped=over,
            detail=self.reason if over else None,
        )


def over_graph_budget(cap: int) -> str:
    """Why a chunk beyond the per-document graph budget got no extraction."""
    return f"over the document's graph budget of {cap} chunks (ingest.graph_max_chunks)"


def plan_graph(chunks: Sequence[GraphCandidate], cap: int) -> GraphPlan:
    """The graph plan of a document's whole chunk set (none when its graph is off)."""
    selected = select_graph_chunks(chunks)
    within = selected[:cap]
    return GraphPlan(
        extract=[c.id for c in within if c.graph_status != GraphStatus.DONE],
        over_budget=[c.id for c in selected[cap:]],
        retried_failures=sum(1 for c in within if c.graph_status == GraphStatus.FAILED),
        reason=over_graph_budget(cap),
    )
