"""The command line `graphrag worker` hands to Celery's worker, built from the settings."""

from __future__ import annotations

from pathlib import Path

from graphrag.settings import CelerySettings

__all__ = ["celery_worker_argv"]


def celery_worker_argv(
    c: CelerySettings,
    log_level: str,
    queues: str,
    pool: str,
    size: int,
    node_name: str,
    beat_schedule: Path | None = None,
) -> list[str]:
    """Celery's worker arguments: the queues, the pool and its size (0: Celery's default), the
    node name, the periodic scheduler's file when this worker runs it, and the peer features
    the settings turn off (gossip, mingle). Remote control stays: health checks ping with it."""
    argv = ["worker", "-Q", queues, "--loglevel", log_level, "--pool", pool]
    if size:
        argv += ["--concurrency", str(size)]
    argv += ["--hostname", node_name]
    if not c.worker_gossip:
        argv.append("--without-gossip")
    if not c.worker_mingle:
        argv.append("--without-mingle")
    if beat_schedule is not None:
        argv += ["--beat", "--schedule", str(beat_schedule)]
    return argv
