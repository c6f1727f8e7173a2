"""The arguments `graphrag worker` hands Celery, read back by Celery's own worker command: the
settings' peer features are really off (or on), and nothing else changes with them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from celery.bin.base import CLIContext
from celery.bin.worker import worker

from graphrag.settings import get_settings
from workers.celery_app import app
from workers.worker_argv import celery_worker_argv


def _parsed(argv: list[str]) -> dict[str, Any]:
    assert argv[0] == "worker"
    context = CLIContext(app=app, no_color=True, workdir=None, quiet=True)
    params: dict[str, Any] = worker.make_context("worker", argv[1:], obj=context).params
    return params


def test_defaults_turn_gossip_and_mingle_off_and_keep_remote_control() -> None:
    c = get_settings().celery
    params = _parsed(celery_worker_argv(c, "INFO", "graph", "threads", 32, "graph@host"))
    assert params["without_gossip"] is True
    assert params["without_mingle"] is True
    # The health checks and the tests ping workers: remote control and heartbeats stay.
    assert params["without_heartbeat"] is False
    assert app.conf.worker_enable_remote_control is True
    assert params["queues"] == ["graph"]
    assert params["concurrency"] == 32
    assert params["hostname"] == "graph@host"
    assert not params["beat"]


@pytest.mark.parametrize("feature", ["gossip", "mingle"])
def test_a_feature_turned_on_is_left_to_celery(feature: str) -> None:
    c = get_settings().celery.model_copy(update={f"worker_{feature}": True})
    params = _parsed(celery_worker_argv(c, "INFO", "docparse", "prefork", 0, "d@host"))
    assert params[f"without_{feature}"] is False
    assert params["concurrency"] is None


def test_the_periodic_scheduler_gets_its_file(tmp_path: Path) -> None:
    c = get_settings().celery
    schedule = tmp_path / "beat"
    params = _parsed(celery_worker_argv(c, "INFO", "memory", "prefork", 2, "m@host", schedule))
    assert params["beat"] is True
    assert params["schedule_filename"] == str(schedule)
