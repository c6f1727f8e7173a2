"""A real worker process takes a task from Redis and answers through the result backend."""

from __future__ import annotations

import os

import pytest
from celery import Celery

from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration

RESULT_TIMEOUT_S = 30.0


def test_ping_round_trip(celery_app: Celery, worker: WorkerProcess) -> None:
    result = celery_app.send_task("system.ping", args=["hello"])
    answer = result.get(timeout=RESULT_TIMEOUT_S)
    assert answer["payload"] == "hello"
    assert answer["pid"] != os.getpid()
    assert worker.proc is not None and worker.proc.poll() is None


def test_queues_are_declared(celery_app: Celery) -> None:
    names = {q.name for q in celery_app.conf.task_queues}
    assert {"docparse", "graph", "memory"} <= names
    assert celery_app.conf.task_acks_late is True
    assert celery_app.conf.task_serializer == "json"
