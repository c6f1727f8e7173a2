"""Prometheus metrics of the backend: LLM calls, Celery tasks and queue depths.

Metrics live in prometheus-client's default registry, created once per process on first use
(the latency buckets come from the settings). A worker started by `graphrag worker` runs in
prometheus-client's multiprocess mode (`PROMETHEUS_MULTIPROC_DIR`), so the counters of its
pool processes add up in one exporter; the API process serves its own at `/metrics`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import redis
from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

__all__ = [
    "LlmMetrics",
    "QueueDepthCollector",
    "llm_metrics",
    "task_counter",
    "unsearchable_vector_counter",
]


@dataclass(frozen=True)
class LlmMetrics:
    """Background and interactive completions: latency, outcome, tokens, requests in flight."""

    latency: Histogram
    requests: Counter
    tokens: Counter
    in_flight: Gauge


_lock = threading.Lock()
_llm: LlmMetrics | None = None
_tasks: Counter | None = None
_unsearchable: Counter | None = None


def llm_metrics(buckets: Sequence[float]) -> LlmMetrics:
    """This process's LLM metrics (the buckets of the first call are kept)."""
    global _llm
    with _lock:
        if _llm is None:
            _llm = LlmMetrics(
                latency=Histogram(
                    "graphrag_llm_request_seconds",
                    "Seconds per completion request to the LLM server",
                    ["model"],
                    buckets=list(buckets),
                ),
                requests=Counter(
                    "graphrag_llm_requests", "Completion requests by outcome", ["model", "outcome"]
                ),
                tokens=Counter(
                    "graphrag_llm_tokens",
                    "Tokens reported by the server's usage",
                    ["model", "kind"],
                ),
                in_flight=Gauge(
                    "graphrag_llm_in_flight",
                    "Completion requests waiting for the server now",
                    ["model"],
                    multiprocess_mode="livesum",
                ),
            )
        return _llm


def task_counter() -> Counter:
    """`graphrag_tasks_total{task, state}`: Celery tasks started, succeeded, failed, retried."""
    global _tasks
    with _lock:
        if _tasks is None:
            _tasks = Counter("graphrag_tasks", "Celery tasks by name and state", ["task", "state"])
        return _tasks


def unsearchable_vector_counter() -> Counter:
    """`graphrag_unsearchable_vectors_total{use}`: vectors without a positive finite norm,
    skipped instead of searched or indexed (`use`: what the vector was for)."""
    global _unsearchable
    with _lock:
        if _unsearchable is None:
            _unsearchable = Counter(
                "graphrag_unsearchable_vectors",
                "Embeddings without a positive finite norm, skipped",
                ["use"],
            )
        return _unsearchable


class QueueDepthCollector(Collector):
    """`graphrag_queue_depth{queue}`: messages waiting in each Redis queue, read at scrape time."""

    def __init__(self, client: redis.Redis[bytes], queues: Sequence[str]) -> None:
        self.client = client
        self.queues = list(queues)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "graphrag_queue_depth", "Messages waiting in the task queue", labels=["queue"]
        )
        pipe = self.client.pipeline(transaction=False)
        for queue in self.queues:
            pipe.llen(queue)
        try:
            depths = pipe.execute()
        except redis.RedisError:
            return  # the broker is down: no sample rather than a wrong one
        for queue, depth in zip(self.queues, depths, strict=True):
            family.add_metric([queue], float(depth))
        yield family
