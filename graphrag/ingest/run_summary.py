"""The figures of one ingestion run: throughput, LLM calls and tokens, slot utilisation."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from graphrag.db.enums import ParseStatus
from graphrag.ingest.batch import DocumentState

__all__ = ["RunSummary", "summarize"]


class RunSummary(BaseModel):
    """Totals of a run; `slot_utilisation` is LLM-busy seconds over wall time times slots."""

    documents: int
    completed: int
    wall_s: float
    documents_per_s: float
    llm_calls: int
    calls_per_document: float
    prompt_tokens_per_document: float
    completion_tokens_per_document: float
    llm_seconds: float
    slots: int
    slot_utilisation: float


def summarize(states: Sequence[DocumentState], wall_s: float, slots: int) -> RunSummary:
    """The run's figures from its documents' final states."""
    n = len(states)
    per_doc = max(n, 1)
    completed = sum(s.status == ParseStatus.COMPLETED for s in states)
    calls = sum(s.llm_calls for s in states)
    llm_seconds = sum(s.llm_seconds for s in states)
    capacity = wall_s * slots
    return RunSummary(
        documents=n,
        completed=completed,
        wall_s=wall_s,
        documents_per_s=completed / wall_s if wall_s > 0 else 0.0,
        llm_calls=calls,
        calls_per_document=calls / per_doc,
        prompt_tokens_per_document=sum(s.llm_prompt_tokens for s in states) / per_doc,
        completion_tokens_per_document=sum(s.llm_completion_tokens for s in states) / per_doc,
        llm_seconds=llm_seconds,
        slots=slots,
        slot_utilisation=llm_seconds / capacity if capacity > 0 else 0.0,
    )
