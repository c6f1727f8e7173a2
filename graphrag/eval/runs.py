"""Evaluation runs: started (a row and its task in the outbox), read, cancelled, compared."""

from __future__ import annotations

import uuid
from dataclasses import asdict

from sqlalchemy.orm import Session

from graphrag.db.enums import EvalRunStatus
from graphrag.db.models import EvalRun, KnowledgeBase
from graphrag.db.outbox import enqueue, run_evaluation
from graphrag.errors import ConflictError, InvalidInputError
from graphrag.eval.metrics import first_gold_rank
from graphrag.eval.question_sets import set_row
from graphrag.eval.rows import newest_rows, owned_row
from graphrag.eval.runner import RunConfig, result_pairs, score_question
from graphrag.eval.schemas import (
    EvalComparison,
    EvalConfig,
    EvalResultPublic,
    EvalRunCreate,
    EvalRunPublic,
    MetricDelta,
    QuestionChange,
)
from graphrag.kb.service import get_kb_row, kb_graph_on
from graphrag.settings import Settings

__all__ = ["cancel_run", "compare_runs", "create_run", "get_run", "list_results", "list_runs"]

_RANKERS = ("ppr", "entity_overlap")


def _resolved(settings: Settings, kb: KnowledgeBase, config: EvalConfig) -> RunConfig:
    """The run's configuration, every null the base's own (or the settings')."""
    search, graph_on = settings.search, kb_graph_on(settings, kb)
    if config.graph and not graph_on:
        raise InvalidInputError("the base's graph is off: a run cannot use it")
    if config.graph_ranker is not None and config.graph_ranker not in _RANKERS:
        raise InvalidInputError(f"graph_ranker must be one of {', '.join(_RANKERS)}")
    if config.model is not None and config.model != settings.llm.model:
        raise InvalidInputError(
            f"runs answer with the configured model ({settings.llm.model}) only"
        )
    if config.top_k is not None and config.top_k > search.max_top_k:
        raise InvalidInputError(f"top_k may not exceed {search.max_top_k}")

    def pick(value: float | None, default: float) -> float:
        return default if value is None else value

    return RunConfig(
        graph=graph_on if config.graph is None else config.graph,
        graph_ranker=config.graph_ranker or search.graph.ranker,
        top_k=config.top_k or settings.evaluation.fetch_k,
        vector_weight=pick(config.vector_weight, search.vector_weight),
        keyword_weight=pick(config.keyword_weight, search.keyword_weight),
        graph_weight=pick(config.graph_weight, search.graph.weight),
        keyword=True if config.keyword is None else config.keyword,
        model=settings.llm.model,
        answer=config.answer,
    )


_SAME_NAMES = (
    "id",
    "kb_id",
    "name",
    "status",
    "config",
    "metrics",
    "error",
    "created_at",
    "started_at",
    "finished_at",
)


def _public(run: EvalRun) -> EvalRunPublic:
    progress = {"done": run.done, "total": run.total}
    same = {name: getattr(run, name) for name in _SAME_NAMES}
    return EvalRunPublic(eval_set_id=run.set_id, progress=progress, **same)


def _run_row(
    session: Session, tenant_id: uuid.UUID, kb_id: uuid.UUID, run_id: uuid.UUID
) -> EvalRun:
    return owned_row(session, EvalRun, tenant_id, kb_id, run_id)


def create_run(
    session: Session,
    settings: Settings,
    tenant_id: uuid.UUID,
    kb_id: uuid.UUID,
    body: EvalRunCreate,
) -> EvalRunPublic:
    """A queued run of the set with its task in the outbox (the caller commits and kicks)."""
    kb = get_kb_row(session, tenant_id, kb_id)
    eval_set = set_row(session, tenant_id, kb_id, body.eval_set_id)
    config = _resolved(settings, kb, body.config)
    run = EvalRun(
        id=uuid.uuid4(),
        tenant_id=tenant_id,
        kb_id=kb_id,
        set_id=eval_set.id,
        name=body.name or f"{eval_set.name}, graph {'on' if config.graph else 'off'}",
        status=EvalRunStatus.QUEUED,
        config=asdict(config),
        done=0,
        total=eval_set.question_count,
    )
    session.add(run)
    session.flush()
    enqueue(session, run_evaluation(run.id))
    session.refresh(run)
    return _public(run)


def list_runs(
    session: Session, settings: Settings, tenant_id: uuid.UUID, kb_id: uuid.UUID
) -> list[EvalRunPublic]:
    """The base's runs, newest first."""
    limit = settings.evaluation.max_runs_listed
    rows = newest_rows(session, EvalRun, tenant_id, kb_id, limit)
    return [_public(row) for row in rows]


def get_run(
    session: Session, tenant_id: uuid.UUID, kb_id: uuid.UUID, run_id: uuid.UUID
) -> EvalRunPublic:
    """One run."""
    return _public(_run_row(session, tenant_id, kb_id, run_id))


def cancel_run(
    session: Session, tenant_id: uuid.UUID, kb_id: uuid.UUID, run_id: uuid.UUID
) -> EvalRunPublic:
    """Cancel a queued or running run (its task stops at the next question); 409 once ended."""
    run = _run_row(session, tenant_id, kb_id, run_id)
    session.refresh(run, with_for_update=True)
    if run.status.ended:
        raise ConflictError(f"a {run.status.value} run cannot be cancelled", status=run.status)
    run.status = EvalRunStatus.CANCELLED
    session.flush()
    return _public(run)


def list_results(
    session: Session,
    settings: Settings,
    tenant_id: uuid.UUID,
    kb_id: uuid.UUID,
    run_id: uuid.UUID,
) -> list[EvalResultPublic]:
    """What the run found for each question scored so far, in the set's order."""
    run = _run_row(session, tenant_id, kb_id, run_id)
    ks, all_at = settings.evaluation.ks, settings.evaluation.all_at
    listed = []
    for question, result in result_pairs(session, run.id):
        score = score_question(question, result, ks, all_at)
        metrics = {f"r_at_{k}": score.recall.get(k) for k in ks} | {
            "rr": score.reciprocal_rank,
            "exact_match": score.exact_match,
            "token_f1": score.token_f1,
            "contains_answer": score.contains_answer,
            "citation_precision": score.citation_precision,
        }
        listed.append(
            EvalResultPublic(
                question_id=question.id,
                question=question.question,
                hops=question.hops,
                tags=list(question.tags),
                ranked_documents=list(result.ranked),
                gold_rank=first_gold_rank(list(result.ranked), list(question.gold)),
                answer=result.answer,
                latency_ms=result.latency_ms,
                llm_calls=result.llm_calls,
                tokens=result.tokens,
                metrics=metrics,
            )
        )
    return listed


def compare_runs(
    session: Session,
    tenant_id: uuid.UUID,
    kb_id: uuid.UUID,
    a_id: uuid.UUID,
    b_id: uuid.UUID,
) -> EvalComparison:
    """Every metric of two runs of one set side by side, and the questions one found (a gold
    document among its ranked documents kept) and the other missed."""
    a, b = (_run_row(session, tenant_id, kb_id, run_id) for run_id in (a_id, b_id))
    if a.set_id != b.set_id:
        raise InvalidInputError("only runs of the same set can be compared")
    overall_a = (a.metrics or {}).get("overall", {})
    overall_b = (b.metrics or {}).get("overall", {})
    metrics = []
    for name in dict.fromkeys([*overall_a, *overall_b]):
        left, right = overall_a.get(name), overall_b.get(name)
        delta = None if left is None or right is None else right - left
        metrics.append(MetricDelta(name=name, a=left, b=right, delta=delta))
    ranks_a = {
        q.id: first_gold_rank(list(r.ranked), list(q.gold)) for q, r in result_pairs(session, a.id)
    }
    changed = []
    for question, result in result_pairs(session, b.id):
        if question.id not in ranks_a or not question.gold:
            continue
        rank_a, rank_b = (
            ranks_a[question.id],
            first_gold_rank(list(result.ranked), list(question.gold)),
        )
        if (rank_a is None) != (rank_b is None):
            changed.append(
                QuestionChange(
                    question_id=question.id,
                    question=question.question,
                    found_by="a" if rank_b is None else "b",
                    a_rank=rank_a,
                    b_rank=rank_b,
                )
            )
    return EvalComparison(a=_public(a), b=_public(b), metrics=metrics, changed=changed)
