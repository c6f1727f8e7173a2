"""An evaluation run whose worker is SIGKILLed mid-run: the outbox sends its task again, a new
worker resumes it where it stopped, and every question is scored once (real worker processes,
PostgreSQL, Redis; the scripted model answers each question slowly)."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from sqlalchemy import func, select

from graphrag.db.engine import session_scope
from graphrag.db.enums import EvalRunStatus
from graphrag.db.models import EvalResult, EvalRun, OutboxTask
from graphrag.eval.question_sets import add_set
from graphrag.eval.runs import create_run
from graphrag.eval.schemas import EvalConfig, EvalRunCreate
from graphrag.graph.store import DisabledGraphStore
from graphrag.ingest.context import IngestContext
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.isolated_worker import (
    add_and_enqueue,
    core_context,
    finished,
    on_own_queues,
    own_database,
    wait_document,
)
from tests.support.services import data_dir
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration

QUESTIONS = 12
ANSWER_DELAY_S = 0.6
KILL_AFTER = 3  # questions scored before the kill
WAIT_S = 120.0
POLL_S = 0.2
# The outbox sends a task again once unsettled this long; the run renews its lease after every
# question (far more often), so only the killed run's task is sent again.
RESEND = {"OUTBOX_VISIBILITY_TIMEOUT_S": "4", "EVALUATION_PROGRESS_EVERY": "1"}


def _run_state(ctx: IngestContext, run_id: uuid.UUID) -> tuple[EvalRunStatus, int, int]:
    with session_scope(ctx.sessions) as session:
        run = session.get(EvalRun, run_id)
        assert run is not None
        results = session.scalar(
            select(func.count()).select_from(EvalResult).where(EvalResult.run_id == run_id)
        )
        return run.status, run.done, int(results or 0)


def _wait(ctx: IngestContext, run_id: uuid.UUID, done: int) -> tuple[EvalRunStatus, int, int]:
    deadline = time.monotonic() + WAIT_S
    while (state := _run_state(ctx, run_id))[2] < done and state[0] is not EvalRunStatus.FAILED:
        assert time.monotonic() < deadline, state
        time.sleep(POLL_S)
    return state


def test_a_killed_run_resumes_and_counts_each_question_once(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    fresh_scripted_llm.set_rules(
        [
            {
                "name": "slow answer",
                "match": {"user": {"contains": "Question number"}},
                "reply": {"content": "The answer is Lyon."},
                "fault": {"delay_s": ANSWER_DELAY_S},
            }
        ],
        default={"content": "[]"},
    )
    moved, env = on_own_queues(settings, settings_env)
    env = {**env, **RESEND}
    with own_database(services_env["DATABASE_URL"], moved, env) as (own_settings, env, sessions):
        from workers.celery_app import create_celery

        ctx = core_context(own_settings, sessions, DisabledGraphStore())
        celery = create_celery(own_settings)
        celery.control.purge()
        log = data_dir() / "test-logs" / "worker-eval-kill.log"
        victim = WorkerProcess(env, log, concurrency=1)
        victim.start(celery)
        kb_id, doc_id = add_and_enqueue(ctx, f"Lyon is in France. {uuid.uuid4()}".encode(), "l.md")
        wait_document(ctx, doc_id, finished)
        lines = "\n".join(
            json.dumps({"question": f"Question number {n}: where is Lyon?", "answer": "Lyon"})
            for n in range(QUESTIONS)
        )
        with session_scope(ctx.sessions) as session:
            tenant = ensure_tenant(session, own_settings.api.default_tenant)
            eval_set = add_set(
                session, own_settings.evaluation, tenant, kb_id, "kill", lines.encode()
            )
            body = EvalRunCreate(eval_set_id=eval_set.id, config=EvalConfig(answer=True))
            run_id = create_run(session, own_settings, tenant, kb_id, body).id
        status, _, scored = _wait(ctx, run_id, KILL_AFTER)
        victim.kill()
        assert status is EvalRunStatus.RUNNING and scored < QUESTIONS

        survivor = WorkerProcess(env, log, concurrency=1)
        survivor.start(celery)
        try:
            deadline = time.monotonic() + WAIT_S
            while (state := _run_state(ctx, run_id))[0] is EvalRunStatus.RUNNING:
                assert time.monotonic() < deadline, state
                time.sleep(POLL_S)
        finally:
            survivor.stop()
        status, done, results = state
        assert status is EvalRunStatus.SUCCEEDED
        assert done == results == QUESTIONS  # each question scored once, none lost
        with session_scope(ctx.sessions) as session:
            run = session.get(EvalRun, run_id)
            assert run is not None and run.metrics is not None
            overall = run.metrics["overall"]
            assert overall["questions"] == QUESTIONS and overall["contains_answer"] == 1.0
            assert session.scalar(select(func.count()).select_from(OutboxTask)) == 0
