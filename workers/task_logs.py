"""The lines a worker writes for every task: Celery's line for each task received and the HTTP
client's for each request (an LLM call, an embedding batch), both at INFO. A graph worker spent
about 5 % of its CPU on them (py-spy, an S = 8 round of bench/ingest_e2e.py), so they have a
level of their own, `celery.per_task_log_level`; the line for each task ended (with its run
time), the retries and every error keep the worker's level."""

from __future__ import annotations

import logging

__all__ = ["set_per_task_log_level"]

# httpx2 is the HTTP client of the OpenAI SDK (the LLM calls); httpx, ours (embeddings, probes).
_PER_TASK_LOGGERS = ("celery.worker.strategy", "httpx2", "httpx")


def set_per_task_log_level(level: str) -> None:
    """Write the per-task lines at `level` and above only. Celery reads its logger's level once,
    when the worker's consumer starts: call this before."""
    for name in _PER_TASK_LOGGERS:
        logging.getLogger(name).setLevel(level)
