"""The worker side of the metrics: task states from Celery signals, and the HTTP exporter.

`graphrag worker` points prometheus-client at a fresh multiprocess directory before anything
imports it, so counters written by pool processes (prefork) or threads add up; the exporter
in the main process reads them all, plus the queue depths from Redis at scrape time.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Any

import redis
from celery import Task
from celery.signals import (
    task_failure,
    task_prerun,
    task_retry,
    task_success,
    worker_process_shutdown,
)

from graphrag.settings import Settings

__all__ = ["MULTIPROC_ENV", "prepare_multiprocess_dir", "start_exporter"]

log = logging.getLogger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def prepare_multiprocess_dir(settings: Settings, port: int) -> Path:
    """An empty directory for this worker's metric files (one per exporter port and host pid)."""
    path = settings.resolve(settings.metrics.multiproc_dir) / f"worker-{port}-{os.getpid()}"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    os.environ[MULTIPROC_ENV] = str(path)
    return path


def start_exporter(settings: Settings, port: int) -> None:
    """Serve `/metrics` on `port` from the worker's main process (all its processes' series)."""
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.multiprocess import MultiProcessCollector

    from graphrag.metrics import QueueDepthCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # untyped upstream
    queues = settings.celery.queues
    registry.register(QueueDepthCollector(redis.Redis.from_url(settings.redis.url), queues))
    try:
        start_http_server(port, addr=settings.metrics.worker_host, registry=registry)
    except OSError as exc:  # another worker on this host has the port: run without an exporter
        log.warning("no metrics exporter on port %d: %s", port, exc)


def _count(sender: Task | None, state: str) -> None:
    from graphrag.metrics import task_counter

    name = getattr(sender, "name", None) or "unknown"
    task_counter().labels(name, state).inc()


@task_prerun.connect
def _started(sender: Task | None = None, **_: Any) -> None:
    _count(sender, "started")


@task_success.connect
def _succeeded(sender: Task | None = None, **_: Any) -> None:
    _count(sender, "succeeded")


@task_failure.connect
def _failed(sender: Task | None = None, **_: Any) -> None:
    _count(sender, "failed")


@task_retry.connect
def _retried(sender: Task | None = None, **_: Any) -> None:
    _count(sender, "retried")


@worker_process_shutdown.connect
def _process_gone(pid: int | None = None, **_: Any) -> None:
    # A pool process that exits takes its live gauges with it.
    if MULTIPROC_ENV in os.environ and pid is not None:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]  # untyped upstream
