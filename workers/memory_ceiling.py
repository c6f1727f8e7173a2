"""A memory ceiling on each process that runs tasks: a document whose parse balloons ends in
that process (a MemoryError that fails the document with the reason, or the process dying and
the poison count failing it), never in the kernel's OOM killer picking PostgreSQL or Neo4j.

The ceiling is RLIMIT_DATA: what the process allocates (heap, anonymous maps, thread stacks),
not the libraries and model files it maps nor the address space glibc reserves for each
thread's arena, which under RLIMIT_AS would eat a threads worker's ceiling before any task
ran. Programs the process starts (Tesseract) inherit it.
"""

from __future__ import annotations

import resource
from typing import Any

from celery import signals

from workers.celery_app import app
from workers.pool import runs_tasks_itself

__all__ = ["OVER_CEILING", "MemoryCeilingError", "apply_memory_ceiling"]

_MIB = 1024 * 1024
_settings = app.conf.graphrag_settings
_CEILING_MB = _settings.celery.worker_memory_ceiling_mb
OVER_CEILING = (
    f"the work needed more memory than a worker process may use ({_CEILING_MB} MB, "
    "celery.worker_memory_ceiling_mb)"
    if _CEILING_MB
    else "the work ran out of memory"
)


class MemoryCeilingError(Exception):
    """What a task raises in place of a MemoryError it caught: Celery takes a MemoryError out
    of a task for its own process's and stops the whole worker, though the task's memory is
    back by then."""


def apply_memory_ceiling(megabytes: int) -> None:
    """Cap this process's data at `megabytes` (0: no cap), within the hard limit it was given."""
    if not megabytes:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = megabytes * _MIB
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))


@signals.worker_process_init.connect
def _in_child(**_: Any) -> None:
    apply_memory_ceiling(_CEILING_MB)


@signals.worker_ready.connect
def _in_worker(sender: Any, **_: Any) -> None:
    # A threads worker runs every task in its own process: the ceiling is the whole worker's.
    if runs_tasks_itself(sender):
        apply_memory_ceiling(_CEILING_MB)
