"""A redis-server of a test's own (own port, own directory, no persistence), for tests that take
the broker away: the shared Redis of the other tests is never touched."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from pathlib import Path

import redis

from tests.support.http_server import free_port

__all__ = ["OwnRedis"]

READY_TIMEOUT_S = 30.0
POLL_S = 0.05


class OwnRedis:
    """`start()`, `lose()` (SHUTDOWN NOSAVE: every key is gone), `start()` again, `stop()`;
    `save()` writes a snapshot that the next `start()` loads, as a restart from `dump.rdb` does."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _client(self) -> redis.Redis[bytes]:
        return redis.Redis.from_url(self.url, socket_timeout=1)

    def _answers(self) -> bool:
        try:
            return bool(self._client().ping())
        except redis.RedisError:
            return False

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is not installed"
        self.workdir.mkdir(parents=True, exist_ok=True)
        args = ["--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.workdir)]
        # No snapshot, no append-only file: a shutdown loses every key, as the test wants.
        args += ["--save", "", "--appendonly", "no", "--logfile", "redis.log"]
        self.proc = subprocess.Popen([binary, *args])
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not self._answers():
            assert self.proc.poll() is None, "redis-server exited; see its log"
            assert time.monotonic() < deadline, "redis-server did not answer"
            time.sleep(POLL_S)

    def save(self) -> None:
        """SAVE: the keys now go to `dump.rdb` in the working directory."""
        self._client().save()

    def lose(self) -> None:
        """Take the broker down with everything it held, as a crash without persistence would."""
        with contextlib.suppress(redis.ConnectionError):  # the server hangs up as it exits
            self._client().shutdown(nosave=True)
        if self.proc is not None:
            self.proc.wait(READY_TIMEOUT_S)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(READY_TIMEOUT_S)
