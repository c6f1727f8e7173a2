"""Public shapes of evaluation sets, runs, results and comparisons (docs/evaluation.md)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from graphrag.db.enums import EvalRunStatus
from graphrag.text_input import Bounded, InputText, RequestModel

__all__ = [
    "EvalComparison",
    "EvalConfig",
    "EvalQuestionPublic",
    "EvalResultPublic",
    "EvalRunCreate",
    "EvalRunPublic",
    "EvalSetDetail",
    "EvalSetPublic",
    "MetricDelta",
    "QuestionChange",
]

Metrics = dict[str, float | None]


class EvalConfig(RequestModel):
    """How a run retrieves (and answers); a value left null is the base's own."""

    model_config = ConfigDict(extra="forbid")

    graph: bool | None = None
    graph_ranker: InputText | None = Field(default=None, max_length=32)
    top_k: int | None = Field(default=None, ge=1)
    vector_weight: float | None = Field(default=None, ge=0.0)
    keyword_weight: float | None = Field(default=None, ge=0.0)
    graph_weight: float | None = Field(default=None, ge=0.0)
    keyword: bool | None = None
    model: InputText | None = Field(default=None, max_length=200)
    answer: bool = False


class EvalRunCreate(RequestModel):
    """Body of `POST .../eval-runs`."""

    model_config = ConfigDict(extra="forbid")

    eval_set_id: uuid.UUID
    name: Annotated[InputText, Bounded("evaluation.max_name_chars")] = ""
    config: EvalConfig = Field(default_factory=EvalConfig)


class EvalSetPublic(BaseModel):
    """A stored set: its size, hop counts and tags."""

    id: uuid.UUID
    kb_id: uuid.UUID
    name: str
    question_count: int
    hops: dict[str, int]
    tags: list[str]
    created_at: datetime


class EvalQuestionPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    question: str
    answer: str | None
    answer_aliases: list[str]
    gold: list[str]
    hops: int | None
    tags: list[str]


class EvalSetDetail(EvalSetPublic):
    """A set with its questions."""

    questions: list[EvalQuestionPublic]


class EvalRunPublic(BaseModel):
    """A run: where it stands and, once done, its metrics overall, per hop count and per tag."""

    id: uuid.UUID
    kb_id: uuid.UUID
    eval_set_id: uuid.UUID
    name: str
    status: EvalRunStatus
    progress: dict[str, int]
    config: dict[str, Any]
    metrics: dict[str, Any] | None
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class EvalResultPublic(BaseModel):
    """What a run found for one question."""

    question_id: uuid.UUID
    question: str
    hops: int | None
    tags: list[str]
    ranked_documents: list[str]
    gold_rank: int | None
    answer: str | None
    latency_ms: float
    llm_calls: int
    tokens: int | None
    metrics: Metrics


class MetricDelta(BaseModel):
    name: str
    a: float | None
    b: float | None
    delta: float | None = Field(description="b - a; null when either is")


class QuestionChange(BaseModel):
    """A question one run found (a gold document in its first k) and the other missed."""

    question_id: uuid.UUID
    question: str
    found_by: str = Field(description="a or b")
    a_rank: int | None
    b_rank: int | None


class EvalComparison(BaseModel):
    a: EvalRunPublic
    b: EvalRunPublic
    metrics: list[MetricDelta]
    changed: list[QuestionChange]
