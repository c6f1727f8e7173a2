"""What a document's graph stage cost, added up by its chunk tasks.

A chunk task adds what it spent once, in the transaction that ends it (its settlement, or the
note of its retry), so the document row is updated once per task. Each addition names the
attempt, so the work of a superseded attempt is not counted against the new one;
a new attempt starts from zero (`COST_RESET`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, Float, Integer, bindparam, update
from sqlalchemy.orm import Session

from graphrag.db.models import Knowledge, core_table

__all__ = ["COST_INCREMENTS", "COST_RESET", "ChunkCost", "add_cost", "cost_params"]


@dataclass(frozen=True)
class ChunkCost:
    """One chunk task's spending: the LLM call the server answered (if it got that far), with
    the tokens its `usage` reported, and the seconds the task worked."""

    seconds: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0


_KNOWLEDGE = core_table(Knowledge)
_K = _KNOWLEDGE.c

# The document columns' increments for one task's cost, as bound parameters: one statement text
# whatever the cost, built once (a statement built per call was a large share of a chunk task's
# CPU). Merged into the UPDATE of the transaction that ends the task.
COST_INCREMENTS: dict[str, Any] = {
    "graph_seconds": _K.graph_seconds + bindparam("p_seconds", type_=Float),
    "llm_calls": _K.llm_calls + bindparam("p_calls", type_=Integer),
    "llm_prompt_tokens": _K.llm_prompt_tokens + bindparam("p_prompt_tokens", type_=BigInteger),
    "llm_completion_tokens": _K.llm_completion_tokens
    + bindparam("p_completion_tokens", type_=BigInteger),
    "llm_seconds": _K.llm_seconds + bindparam("p_llm_seconds", type_=Float),
    "graph_retries": _K.graph_retries + bindparam("p_retries", type_=Integer),
}

# The same columns at zero, for a new attempt.
COST_RESET: dict[str, int | float] = {
    "graph_seconds": 0.0,
    "llm_calls": 0,
    "llm_prompt_tokens": 0,
    "llm_completion_tokens": 0,
    "llm_seconds": 0.0,
    "graph_retries": 0,
}

_ADD_COST = (
    update(_KNOWLEDGE)
    .where(_K.id == bindparam("p_id"), _K.attempt == bindparam("p_attempt"))
    .values(COST_INCREMENTS)
)


def cost_params(cost: ChunkCost, *, retry: bool = False) -> dict[str, Any]:
    """The values of `COST_INCREMENTS`' parameters for `cost` (a retry also counts one more)."""
    return {
        "p_seconds": cost.seconds,
        "p_calls": cost.llm_calls,
        "p_prompt_tokens": cost.prompt_tokens,
        "p_completion_tokens": cost.completion_tokens,
        "p_llm_seconds": cost.llm_seconds,
        "p_retries": 1 if retry else 0,
    }


def add_cost(
    session: Session,
    knowledge_id: uuid.UUID,
    attempt: int,
    cost: ChunkCost,
    *,
    retry: bool = False,
) -> None:
    """Add one chunk task's cost on its own (a task that ends without settling its chunk)."""
    params = {"p_id": knowledge_id, "p_attempt": attempt, **cost_params(cost, retry=retry)}
    session.execute(_ADD_COST, params)
