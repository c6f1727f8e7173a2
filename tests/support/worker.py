"""A real Celery worker process for integration tests, started and stopped like in production."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from celery import Celery

from tests.support.services import ROOT, worker_environment
from workers.node_name import default_node_name

__all__ = ["WorkerProcess", "wait_idle"]

READY_TIMEOUT_S = 90.0


class WorkerProcess:
    """`graphrag worker` in a subprocess, with the test session's environment."""

    def __init__(
        self,
        env: dict[str, str],
        log_path: Path,
        concurrency: int = 2,
        queues: Sequence[str] = (),
        default_name: bool = False,
    ) -> None:
        """`concurrency` 0 leaves the choice to `graphrag worker` (a graph-only worker: slots);
        `default_name` starts it without `--name` (it needs `queues`: the name comes from them)."""
        self.env = worker_environment(env)
        self.log_path = log_path
        self.concurrency = concurrency
        self.queues = list(queues)
        self.default_name = default_name
        if default_name:
            self.name = default_node_name(self.queues).replace("%h", socket.gethostname())
        else:
            self.name = f"test-{uuid.uuid4().hex[:8]}@{socket.gethostname()}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: BinaryIO | None = None

    def start(self, celery: Celery) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = log = self.log_path.open("ab")
        argv = [
            sys.executable,
            "-m",
            "cli.main",
            "worker",
            f"--concurrency={self.concurrency}",
        ]
        if not self.default_name:
            argv.append(f"--name={self.name}")
        if self.queues:
            argv.append(f"--queues={','.join(self.queues)}")
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited early; see {self.log_path}")
            replies = celery.control.ping(timeout=1.0)
            if any(self.name in reply for reply in replies):
                return
        raise RuntimeError(f"worker not ready after {READY_TIMEOUT_S}s; see {self.log_path}")

    def kill(self) -> None:
        """SIGKILL the whole worker process group: a crash, not a shutdown."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=READY_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.kill()
        self._close_log()


def wait_idle(celery: Celery, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Wait until no worker runs or holds a task: the queue's work so far is done."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        inspect = celery.control.inspect(timeout=1.0)
        active, reserved = inspect.active() or {}, inspect.reserved() or {}
        if not any(active.values()) and not any(reserved.values()):
            return
        time.sleep(0.2)
    raise AssertionError("workers still busy")
