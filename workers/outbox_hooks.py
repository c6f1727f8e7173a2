"""The worker's side of the outbox: its relay thread, and what only Celery sees of a task.

Each process that runs tasks (every prefork child, or the worker itself with a thread pool)
runs one relay loop, started after the fork so no thread or connection crosses it. A task's
start and its success are its own: its wrapper hands the core function a `TaskLease`, renewed
and settled in the transactions the work runs anyway. What no core function sees is recorded
here when the task ends: a retry keeps the row waiting for Celery, an unexpected error makes it
due again; either way the relay is woken at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import Task, signals, states
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from graphrag.db.engine import session_scope
from graphrag.db.outbox import TaskName, record_failure, record_retry
from workers.pool import runs_tasks_itself
from workers.scope import process_scope

log = logging.getLogger(__name__)

_OUTBOX_TASKS = frozenset(TaskName)

_RowWrite = Callable[[Session, str, list[Any]], object]


@signals.worker_process_init.connect
def _start_in_child(**_: Any) -> None:
    process_scope().start_relay()


@signals.worker_ready.connect
def _start_in_worker(sender: Any, **_: Any) -> None:
    # A prefork worker relays from its children; a thread or solo pool runs tasks here.
    if runs_tasks_itself(sender):
        process_scope().start_relay()


@signals.task_postrun.connect
def _on_end(task: Task, args: tuple[Any, ...], state: str, retval: Any, **_: Any) -> None:
    if task.name not in _OUTBOX_TASKS:
        return
    if state == states.RETRY:
        _record(task.name, args, record_retry)
    elif state == states.FAILURE:
        limit = process_scope().settings.outbox.error_max_chars
        error = f"{type(retval).__name__}: {retval}"[:limit]
        _record(task.name, args, lambda s, n, a: record_failure(s, n, a, error))
    process_scope().relay.kick()


def _record(name: str, args: tuple[Any, ...], write: _RowWrite) -> None:
    try:
        with session_scope(process_scope().sessions) as session:
            write(session, name, list(args))
    except SQLAlchemyError as exc:
        # The row keeps its last state; the visibility timeout covers a missed update.
        log.warning("outbox row of %s not updated: %s", name, exc)
