"""What a document's graph stage cost, added up by its chunk tasks.

Each addition is one guarded UPDATE naming the attempt, so the work of a superseded attempt is
not counted against the new one; `reset_accounting` starts a new attempt from zero.
"""

from __future__ import annotations

import uuid

from sqlalchemy import update
from sqlalchemy.orm import Session

from graphrag.db.models import Knowledge

__all__ = ["add_graph_retry", "add_graph_seconds", "add_llm_call", "reset_accounting"]


def add_llm_call(
    session: Session,
    knowledge_id: uuid.UUID,
    attempt: int,
    *,
    prompt_tokens: int,
    completion_tokens: int,
    seconds: float,
) -> None:
    """Count one answered LLM call with the tokens its `usage` reported."""
    session.execute(
        update(Knowledge)
        .where(Knowledge.id == knowledge_id, Knowledge.attempt == attempt)
        .values(
            llm_calls=Knowledge.llm_calls + 1,
            llm_prompt_tokens=Knowledge.llm_prompt_tokens + prompt_tokens,
            llm_completion_tokens=Knowledge.llm_completion_tokens + completion_tokens,
            llm_seconds=Knowledge.llm_seconds + seconds,
        )
    )


def add_graph_retry(
    session: Session, knowledge_id: uuid.UUID, attempt: int, seconds: float
) -> None:
    """Count one chunk task that will be tried again, and the seconds it worked."""
    session.execute(
        update(Knowledge)
        .where(Knowledge.id == knowledge_id, Knowledge.attempt == attempt)
        .values(
            graph_retries=Knowledge.graph_retries + 1,
            graph_seconds=Knowledge.graph_seconds + seconds,
        )
    )


def add_graph_seconds(
    session: Session, knowledge_id: uuid.UUID, attempt: int, seconds: float
) -> None:
    """Add the seconds one chunk task worked (loading, the LLM call, the graph write)."""
    session.execute(
        update(Knowledge)
        .where(Knowledge.id == knowledge_id, Knowledge.attempt == attempt)
        .values(graph_seconds=Knowledge.graph_seconds + seconds)
    )


def reset_accounting(doc: Knowledge) -> None:
    """Zero the counters of a document whose new attempt starts."""
    doc.llm_calls = doc.graph_retries = 0
    doc.llm_prompt_tokens = doc.llm_completion_tokens = 0
    doc.llm_seconds = doc.graph_seconds = 0.0
