"""Settings of the background work: the Celery queues and workers, the outbox relay."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from graphrag.settings.base import Section as _Section

__all__ = ["CelerySettings", "OutboxSettings"]


class CelerySettings(_Section):
    docparse_queue: str
    graph_queue: str
    memory_queue: str
    eval_queue: str
    default_queue: str
    prefetch_multiplier: int
    docparse_time_limit_s: int
    graph_time_limit_s: int
    graph_max_retries: int
    # Celery's retry_backoff: whole seconds, at least 1.
    graph_retry_backoff_s: int = Field(ge=1)
    graph_soft_limit_margin_s: int
    docparse_soft_limit_margin_s: int = Field(gt=0)
    retry_backoff_max_s: int
    result_expires_s: int
    beat_schedule_file: Path
    broker_ack_emulation: bool
    broker_visibility_timeout_s: int
    per_task_log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        description="Celery's line for each task received, the HTTP clients' for each request"
    )
    worker_gossip: bool = Field(description="a worker follows the others' events (Celery's gossip)")
    worker_mingle: bool = Field(description="a starting worker waits to sync with the others")
    graph_pool: Literal["threads", "prefork"]
    graph_threads_per_slot: int = Field(ge=1)
    graph_threads_over_slots: int = Field(
        ge=0, description="a graph worker runs at most this many threads beyond the LLM slots"
    )
    heartbeat_interval_s: float = Field(gt=0.0, description="a worker renews its heartbeat")
    heartbeat_ttl_s: float = Field(gt=0.0, description="a worker silent this long is gone")
    worker_memory_ceiling_mb: int = Field(
        ge=0, description="data of one process that runs tasks (RLIMIT_DATA); 0: none"
    )
    max_memory_per_child_mb: int = Field(
        ge=0, description="a prefork child larger than this after a task is replaced; 0: never"
    )
    gc_young_threshold: int = Field(
        ge=0, description="new objects between a worker's young collections; 0: Python's default"
    )
    layout_poll_s: float = Field(gt=0.0, description="the fast layout checks its workers")
    layout_stop_grace_s: float = Field(gt=0.0, description="a stopped worker may take this long")

    @property
    def graph_soft_limit_s(self) -> int:
        """When a graph task fails for its time: Celery's soft limit, and the task's own
        deadline under the threads pool, where Celery enforces no limit."""
        return self.graph_time_limit_s - self.graph_soft_limit_margin_s

    @property
    def queues(self) -> list[str]:
        """Every queue, the default first: what a worker consumes unless told, what is metered."""
        return [
            self.default_queue,
            self.docparse_queue,
            self.graph_queue,
            self.memory_queue,
            self.eval_queue,
        ]


class OutboxSettings(_Section):
    relay_interval_s: float
    kick_gap_s: float = Field(ge=0.0)
    lock_retry_s: float = Field(gt=0.0)
    batch_size: int
    graph_in_flight: int
    parse_in_flight: int
    visibility_timeout_s: int
    max_resends: int
    error_max_chars: int
