"""The Celery application: Redis broker, explicit queues, late acks, JSON only.

Tasks live in workers/tasks_*.py and stay thin: parse ids, call one core function.
"""

from __future__ import annotations

from celery import Celery
from kombu import Queue

from graphrag.settings import Settings, get_settings

__all__ = ["TASK_MODULES", "app", "create_celery"]

# Imported by the worker at start; producers enqueue by task name and need none of them.
TASK_MODULES = [
    "workers.tasks_system",
    "workers.tasks_documents",
    "workers.tasks_graph",
    "workers.tasks_memory",
    "workers.outbox_hooks",
    "workers.heartbeat",
]


def create_celery(settings: Settings) -> Celery:
    """Build the Celery app from the settings (queues, timeouts, acknowledgement policy)."""
    c = settings.celery
    celery = Celery("graphrag", broker=settings.redis.url, backend=settings.redis.url)
    celery.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_acks_late=True,
        # A worker killed mid-task must not lose the message: it goes back to the queue.
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=c.prefetch_multiplier,
        # Redis redelivers a message left unacknowledged this long. Set above every task's time
        # limit (and retry countdown) so a running task is not delivered twice. Messages the
        # broker loses outright are sent again from the outbox (graphrag/ingest/relay.py).
        broker_transport_options={"visibility_timeout": c.broker_visibility_timeout_s},
        task_default_queue=c.default_queue,
        task_queues=[
            Queue(c.default_queue),
            Queue(c.docparse_queue),
            Queue(c.graph_queue),
            Queue(c.memory_queue),
        ],
        task_routes={
            "document.*": {"queue": c.docparse_queue},
            "graph.*": {"queue": c.graph_queue},
            "memory.*": {"queue": c.memory_queue},
        },
        result_expires=c.result_expires_s,
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        timezone="UTC",
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
