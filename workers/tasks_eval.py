"""Evaluation tasks: one run, question by question, on the `eval` queue."""

from __future__ import annotations

import uuid

from graphrag.db.outbox import TaskLease, TaskName
from graphrag.eval.runner import run_eval
from workers.celery_app import app
from workers.scope import process_scope

_settings = app.conf.graphrag_settings


@app.task(
    name=TaskName.RUN_EVALUATION.value,
    acks_late=True,
    time_limit=_settings.evaluation.run_time_limit_s,
    ignore_result=True,
)
def run(run_id: str) -> str:
    """Score the run's questions not scored yet (a redelivered run resumes); its final status."""
    lease = TaskLease(TaskName.RUN_EVALUATION, (run_id,))
    return run_eval(process_scope().chat(), uuid.UUID(run_id), lease).value
