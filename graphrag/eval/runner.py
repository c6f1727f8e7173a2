"""One evaluation run, question by question: the work of its Celery task.

Each question is retrieved as the base's search does, with the run's configuration over the
base's (graph on or off, ranker, fusion weights, keyword list, hits fetched); neighbouring
chunks of a document form one passage, and the passages' documents are the ranking (as
`bench/retrieval_quality.py` ranks). With `answer`, the knowledge chat answers the question
too (its LLM calls and tokens counted). A result row is written per question, once (a resumed
run skips the questions already scored, so none is counted twice); the run's lease is renewed
as it goes, it stops at the next question once cancelled, and its metrics are written with its
last state in the transaction that settles its task.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from graphrag.chat.schemas import ChatRequest
from graphrag.chat.service import complete_turn, start_stateless_turn
from graphrag.chat.turn import ChatServices
from graphrag.db.engine import session_scope
from graphrag.db.enums import EvalRunStatus
from graphrag.db.models import EvalQuestion, EvalResult, EvalRun, KnowledgeBase
from graphrag.db.outbox import TaskLease
from graphrag.eval.metrics import (
    QuestionScore,
    contains_answer,
    exact_match,
    first_gold_rank,
    recall_at,
    summarise,
    token_f1,
)
from graphrag.eval.question_sets import questions_of
from graphrag.search.kb_search import kb_scope
from graphrag.search.models import KbScope, RetrievalRequest
from graphrag.search.passages import join_neighbours
from graphrag.search.retrieval import GraphSource, retrieve
from graphrag.settings import SearchSettings, Settings
from graphrag.timing import elapsed_ms

__all__ = ["RunConfig", "ranked_documents", "result_pairs", "run_eval", "score_question"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunConfig:
    """A run's configuration with every value resolved (what the run row keeps)."""

    graph: bool
    graph_ranker: str
    top_k: int
    vector_weight: float
    keyword_weight: float
    graph_weight: float
    keyword: bool
    model: str
    answer: bool

    @classmethod
    def of(cls, stored: dict[str, Any]) -> RunConfig:
        """The configuration a run row keeps."""
        return cls(**stored)

    def search(self, search: SearchSettings) -> SearchSettings:
        """The search settings with the run's ranker and weights."""
        graph = search.graph.model_copy(
            update={"ranker": self.graph_ranker, "weight": self.graph_weight}
        )
        return search.model_copy(
            update={
                "vector_weight": self.vector_weight,
                "keyword_weight": self.keyword_weight,
                "graph": graph,
            }
        )


def ranked_documents(
    session: Session,
    services: ChatServices,
    scope: KbScope,
    question: str,
    config: RunConfig,
) -> list[str]:
    """The documents of the passages retrieval returns for `question`, best first (a document
    ranked twice keeps both ranks)."""
    settings = services.settings
    search = config.search(settings.search)
    request = RetrievalRequest(
        query=question,
        scopes=[scope],
        top_k=config.top_k,
        vector_threshold=search.vector_threshold,
        keyword_threshold=search.keyword_threshold,
        use_keyword=config.keyword,
        use_graph=config.graph,
    )
    hits = retrieve(session, services.embedder, search, request, GraphSource(services.graph)).hits
    passages = join_neighbours(hits, settings.chat.passage_join_max_overlap)
    return [str(passage.hits[0].knowledge_id) for passage in passages]


def _cited_numbers(answer: str) -> set[int]:
    """The [n] citations of an answer, read by a forward scan."""
    numbers: set[int] = set()
    start = answer.find("[")
    while start != -1:
        end = start + 1
        while end < len(answer) and answer[end].isdigit():
            end += 1
        if end > start + 1 and end < len(answer) and answer[end] == "]":
            numbers.add(int(answer[start + 1 : end]))
        start = answer.find("[", end)
    return numbers


@dataclass(frozen=True)
class _Answered:
    text: str
    cited: list[str]
    llm_calls: int
    tokens: int | None


def _answer(services: ChatServices, run: EvalRun, question: str, config: RunConfig) -> _Answered:
    request = ChatRequest(query=question, kb_ids=[run.kb_id], use_graph=config.graph, stream=False)
    turn = start_stateless_turn(services, run.tenant_id, request, [])
    complete_turn(services, turn)
    by_number = {ref.n: str(ref.knowledge_id) for ref in turn.references}
    cited = [by_number[n] for n in sorted(_cited_numbers(turn.answer)) if n in by_number]
    usage = turn.usage.public()
    tokens = usage.total_tokens if usage is not None else None
    return _Answered(turn.answer, cited, turn.usage.llm_calls, tokens)


def score_question(
    question: EvalQuestion, result: EvalResult, ks: Sequence[int], all_at: int
) -> QuestionScore:
    """The figures of one question's result."""
    gold, ranked = list(question.gold), list(result.ranked)
    golden = [question.answer, *question.answer_aliases] if question.answer else []
    answered = result.answer is not None and bool(golden)
    first = first_gold_rank(ranked, gold)
    cited = list(result.cited)
    return QuestionScore(
        recall={k: recall_at(ranked, gold, k) for k in ks} if gold else {},
        reciprocal_rank=(1.0 / first if first else 0.0) if gold else None,
        all_found=(1.0 if set(gold) <= set(ranked[:all_at]) else 0.0) if gold else None,
        latency_ms=result.latency_ms,
        llm_calls=result.llm_calls,
        tokens=result.tokens,
        exact_match=exact_match(result.answer or "", golden) if answered else None,
        token_f1=token_f1(result.answer or "", golden) if answered else None,
        contains_answer=contains_answer(result.answer or "", golden) if answered else None,
        citation_precision=(
            sum(doc in gold for doc in cited) / len(cited) if cited and gold else None
        ),
    )


def run_metrics(
    pairs: Sequence[tuple[EvalQuestion, EvalResult]], settings: Settings
) -> dict[str, Any]:
    """Overall, per hop count and per tag."""
    ks, all_at = settings.evaluation.ks, settings.evaluation.all_at
    scored = [(q, score_question(q, r, ks, all_at)) for q, r in pairs]
    hops = sorted({q.hops for q, _ in scored if q.hops is not None})
    tags = sorted({t for q, _ in scored for t in q.tags})
    return {
        "overall": summarise([s for _, s in scored], ks, all_at),
        "by_hops": {
            str(h): summarise([s for q, s in scored if q.hops == h], ks, all_at) for h in hops
        },
        "by_tag": {t: summarise([s for q, s in scored if t in q.tags], ks, all_at) for t in tags},
    }


def result_pairs(session: Session, run_id: uuid.UUID) -> list[tuple[EvalQuestion, EvalResult]]:
    """The run's questions scored so far with their results, in the set's order."""
    rows = session.execute(
        select(EvalQuestion, EvalResult)
        .join(EvalResult, EvalResult.question_id == EvalQuestion.id)
        .where(EvalResult.run_id == run_id)
        .order_by(EvalQuestion.seq)
    ).all()
    return [(q, r) for q, r in rows]


def _start(services: ChatServices, run_id: uuid.UUID, lease: TaskLease) -> EvalRun | None:
    """The run, marked running with its lease renewed; None (and its task settled) when it is
    gone or already ended."""
    with session_scope(services.sessions) as session:
        run = session.get(EvalRun, run_id, with_for_update=True)
        if run is None or run.status.ended:
            lease.settle(session)
            return None
        run.status = EvalRunStatus.RUNNING
        run.started_at = run.started_at or datetime.now(UTC)
        lease.renew(session)
        session.flush()
        session.expunge(run)
        return run


def _pending(services: ChatServices, run: EvalRun) -> tuple[list[EvalQuestion], KbScope | None]:
    with session_scope(services.sessions) as session:
        scored = set(
            session.scalars(select(EvalResult.question_id).where(EvalResult.run_id == run.id))
        )
        questions = [q for q in questions_of(session, run.set_id) if q.id not in scored]
        for question in questions:
            session.expunge(question)
        kb = session.get(KnowledgeBase, run.kb_id)
        return questions, kb_scope(services.settings, kb) if kb is not None else None


def _record(
    services: ChatServices, run: EvalRun, row: dict[str, Any], lease: TaskLease, renew: bool
) -> bool:
    """Write one question's result (once) and the run's progress; False once it is cancelled."""
    with session_scope(services.sessions) as session:
        session.execute(insert(EvalResult).values(**row).on_conflict_do_nothing())
        done = select(func.count()).where(EvalResult.run_id == run.id).scalar_subquery()
        status = session.execute(
            update(EvalRun).where(EvalRun.id == run.id).values(done=done).returning(EvalRun.status)
        ).scalar_one()
        if renew:
            lease.renew(session)
        return status is EvalRunStatus.RUNNING


def _finish(
    services: ChatServices, run_id: uuid.UUID, lease: TaskLease, error: str | None
) -> EvalRunStatus:
    with session_scope(services.sessions) as session:
        run = session.get(EvalRun, run_id, with_for_update=True)
        lease.settle(session)
        if run is None:
            return EvalRunStatus.CANCELLED
        if run.status is EvalRunStatus.RUNNING:
            pairs = result_pairs(session, run_id)
            run.done = len(pairs)
            run.metrics = run_metrics(pairs, services.settings)
            run.status = EvalRunStatus.FAILED if error else EvalRunStatus.SUCCEEDED
            run.error = error
            run.finished_at = datetime.now(UTC)
        return run.status


def run_eval(services: ChatServices, run_id: uuid.UUID, lease: TaskLease) -> EvalRunStatus:
    """Score every question of the run not scored yet; the run's final status."""
    run = _start(services, run_id, lease)
    if run is None:
        return EvalRunStatus.CANCELLED
    config = RunConfig.of(run.config)
    questions, scope = _pending(services, run)
    if scope is None:
        return _finish(services, run_id, lease, "the knowledge base is gone")
    every = services.settings.evaluation.progress_every
    try:
        for index, question in enumerate(questions, start=1):
            started = time.perf_counter()
            with session_scope(services.sessions) as session:
                ranked = ranked_documents(session, services, scope, question.question, config)
            answered = _answer(services, run, question.question, config) if config.answer else None
            row = {
                "run_id": run.id,
                "question_id": question.id,
                "ranked": ranked[: services.settings.evaluation.ranked_kept],
                "cited": answered.cited if answered else [],
                "answer": answered.text if answered else None,
                "latency_ms": elapsed_ms(started),
                "llm_calls": answered.llm_calls if answered else 0,
                "tokens": answered.tokens if answered else None,
            }
            if not _record(services, run, row, lease, index % every == 0):
                return _finish(services, run_id, lease, None)
    except Exception as exc:  # every run ends in a terminal state, with the reason
        log.exception("evaluation run %s failed", run_id)
        return _finish(services, run_id, lease, f"{type(exc).__name__}: {exc}")
    return _finish(services, run_id, lease, None)
