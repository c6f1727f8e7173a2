"""What a document's graph stage cost, added up by its chunk tasks.

A chunk task adds what it spent once, in the transaction that ends it (its settlement, or the
note of its retry), so the document row is updated once per task. Each addition names the
attempt, so the work of a superseded attempt is not counted against the new one;
`reset_accounting` starts a new attempt from zero.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from graphrag.db.models import Knowledge

__all__ = ["ChunkCost", "add_cost", "cost_values", "reset_accounting"]


@dataclass(frozen=True)
class ChunkCost:
    """One chunk task's spending: the LLM call the server answered (if it got that far), with
    the tokens its `usage` reported, and the seconds the task worked."""

    seconds: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0


def cost_values(cost: ChunkCost, *, retry: bool = False) -> dict[str, Any]:
    """The document columns' increments for `cost` (a retry also counts one more retry), to be
    merged into the UPDATE of the transaction that ends the task."""
    values: dict[str, Any] = {"graph_seconds": Knowledge.graph_seconds + cost.seconds}
    if cost.llm_calls:
        values |= {
            "llm_calls": Knowledge.llm_calls + cost.llm_calls,
            "llm_prompt_tokens": Knowledge.llm_prompt_tokens + cost.prompt_tokens,
            "llm_completion_tokens": Knowledge.llm_completion_tokens + cost.completion_tokens,
            "llm_seconds": Knowledge.llm_seconds + cost.llm_seconds,
        }
    if retry:
        values["graph_retries"] = Knowledge.graph_retries + 1
    return values


def add_cost(
    session: Session,
    knowledge_id: uuid.UUID,
    attempt: int,
    cost: ChunkCost,
    *,
    retry: bool = False,
) -> None:
    """Add one chunk task's cost on its own (a task that ends without settling its chunk)."""
    session.execute(
        update(Knowledge)
        .where(Knowledge.id == knowledge_id, Knowledge.attempt == attempt)
        .values(cost_values(cost, retry=retry))
    )


def reset_accounting(doc: Knowledge) -> None:
    """Zero the counters of a document whose new attempt starts."""
    doc.llm_calls = doc.graph_retries = 0
    doc.llm_prompt_tokens = doc.llm_completion_tokens = 0
    doc.llm_seconds = doc.graph_seconds = 0.0
