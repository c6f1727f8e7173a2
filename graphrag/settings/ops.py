"""Settings of operations: the workers' metrics exporter and the command line."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from graphrag.settings.base import Section as _Section

__all__ = ["CliSettings", "MetricsSettings"]


class MetricsSettings(_Section):
    """Prometheus metrics: the workers' exporter and the LLM latency buckets."""

    worker_host: str = Field(description="the address a worker's exporter binds")
    worker_port: int = Field(ge=0, description="a worker's exporter port; 0: no exporter")
    multiproc_dir: Path
    llm_latency_buckets_s: list[float] = Field(min_length=1)


class CliSettings(_Section):
    poll_interval_s: float
    upload_concurrency: int = Field(gt=0)
    wait_timeout_s: float
    demo_kb_name: str
    demo_question: str
