"""The figures `graphrag ingest` prints at the end of a run."""

from __future__ import annotations

import uuid

import pytest

from graphrag.db.enums import ParseStatus
from graphrag.ingest.batch import DocumentState
from graphrag.ingest.run_summary import summarize

pytestmark = pytest.mark.unit


def _state(status: ParseStatus, calls: int, prompt: int, seconds: float) -> DocumentState:
    return DocumentState(
        knowledge_id=uuid.uuid4(),
        status=status,
        progress={},
        chunk_count=calls,
        entity_count=0,
        relation_count=0,
        failed_chunk_count=0,
        error=None,
        llm_calls=calls,
        llm_prompt_tokens=prompt,
        llm_completion_tokens=calls * 10,
        llm_seconds=seconds,
    )


def test_summary_of_a_run() -> None:
    states = [
        _state(ParseStatus.COMPLETED, 2, 400, 0.2),
        _state(ParseStatus.COMPLETED, 4, 800, 0.4),
        _state(ParseStatus.FAILED, 0, 0, 0.0),
    ]
    run = summarize(states, wall_s=0.5, slots=2)
    assert (run.documents, run.completed, run.llm_calls) == (3, 2, 6)
    assert run.documents_per_s == pytest.approx(4.0)
    assert run.calls_per_document == pytest.approx(2.0)
    assert run.prompt_tokens_per_document == pytest.approx(400.0)
    assert run.completion_tokens_per_document == pytest.approx(20.0)
    assert run.slot_utilisation == pytest.approx(0.6)


def test_empty_run_divides_by_nothing() -> None:
    run = summarize([], wall_s=0.0, slots=4)
    assert run.documents_per_s == run.slot_utilisation == run.calls_per_document == 0.0
