"""The Celery application: Redis broker, explicit queues, late acks, JSON only.

Tasks live in workers/tasks_*.py and stay thin: parse ids, call one core function. Only worker
processes import this module (its `app` is what the task modules register on); producers send
through `workers.queue.sender_queue` and never build it.
"""

from __future__ import annotations

from celery import Celery

from graphrag.settings import Settings, get_settings
from workers.queue import routing_conf

__all__ = ["TASK_MODULES", "app", "create_celery"]

# Imported by the worker at start; producers enqueue by task name and need none of them.
TASK_MODULES = [
    "workers.tasks_system",
    "workers.tasks_documents",
    "workers.tasks_graph",
    "workers.tasks_memory",
    "workers.tasks_eval",
    "workers.outbox_hooks",
    "workers.heartbeat",
    "workers.memory_ceiling",
]


def create_celery(settings: Settings) -> Celery:
    """Build the Celery app from the settings (queues, timeouts, acknowledgement policy)."""
    c = settings.celery
    celery = Celery("graphrag", broker=settings.redis.url, backend=settings.redis.url)
    celery.conf.update(routing_conf(settings))
    celery.conf.update(
        task_acks_late=True,
        # A worker killed mid-task must not lose the message: it goes back to the queue.
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=c.prefetch_multiplier,
        # A prefork child grown past this (its resident size, checked after each task) is
        # replaced: memory a large document left behind goes back to the machine.
        worker_max_memory_per_child=c.max_memory_per_child_mb * 1024 or None,
        result_expires=c.result_expires_s,
        worker_hijack_root_logger=False,
        include=TASK_MODULES,
        beat_schedule={
            "reconcile-stuck-documents": {
                "task": "document.reconcile",
                "schedule": float(settings.ingest.reconcile_interval_s),
            },
            "close-idle-memory-sessions": {
                "task": "memory.close_idle_sessions",
                "schedule": float(settings.memory.sweep_interval_s),
            },
        },
    )
    # Task modules read their limits from here, so they share the app's settings object.
    celery.conf.graphrag_settings = settings
    return celery


app = create_celery(get_settings())
