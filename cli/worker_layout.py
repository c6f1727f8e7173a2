"""`graphrag worker` with no options: the fast layout in one command.

Graph extraction waits on the LLM server and runs best on threads sized to its slots; parsing
and embedding work the CPU and run best on processes. One Celery worker has one pool, so the
command starts two workers as child processes, each on its own queues (their node names follow
the queues: `graph@host`, `default-docparse-memory@host`), and supervises them: a signal is
passed on to both, and when one ends the other is stopped and the command exits with the code
of the first. The graph worker serves metrics on the configured port, the other on the next.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from types import FrameType

from graphrag.settings import Settings

__all__ = ["run_fast_layout", "worker_commands"]


def worker_commands(settings: Settings, metrics_port: int, beat: bool) -> list[list[str]]:
    """The two workers' command lines: the graph queue on threads, every other queue on
    processes (with the periodic reconciler when `beat`)."""
    celery = settings.celery
    others = [queue for queue in celery.queues if queue != celery.graph_queue]
    base = [sys.executable, "-m", "cli.main", "worker"]
    graph = [*base, "--queues", celery.graph_queue, "--metrics-port", str(metrics_port)]
    rest_port = metrics_port + 1 if metrics_port else 0
    rest = [*base, "--queues", ",".join(others), "--metrics-port", str(rest_port)]
    return [graph, [*rest, "--beat"] if beat else rest]


def run_fast_layout(settings: Settings, metrics_port: int, beat: bool) -> int:
    """Run both workers until one ends or a signal comes; the exit code of the first to end."""
    children = [subprocess.Popen(argv) for argv in worker_commands(settings, metrics_port, beat)]
    celery = settings.celery

    def pass_on(signum: int, _frame: FrameType | None) -> None:
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, pass_on)
    ended: subprocess.Popen[bytes] | None = None
    try:
        while ended is None:
            ended = next((child for child in children if child.poll() is not None), None)
            if ended is None:
                time.sleep(celery.layout_poll_s)
    finally:
        for child in children:
            if child.poll() is None:
                child.terminate()
        deadline = time.monotonic() + celery.layout_stop_grace_s
        for child in children:
            try:
                child.wait(timeout=max(deadline - time.monotonic(), 0.0))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    return ended.returncode if ended is not None else 1
