"""The API as a process of its own (`graphrag serve`) on the session's services.

A test that loads the API hard runs it apart: a frozen API then fails the test (its `/health`
probes time out) instead of freezing the test process with it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from tests.support.http_server import STARTUP_TIMEOUT_S, free_port
from tests.support.services import ROOT, worker_environment

__all__ = ["api_process"]

_PROBE_PAUSE_S = 0.05


@contextmanager
def api_process(settings_env: dict[str, str], **env: str) -> Iterator[str]:
    """`graphrag serve` with `settings_env` (and `env` on top); its URL once `/health` answers."""
    port = free_port()
    full = {**worker_environment(settings_env), "ENVIRONMENT": "test", **env}
    command = [sys.executable, "-m", "cli.main", "serve", "--port", str(port)]
    proc = subprocess.Popen(command, cwd=ROOT, env=full)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "the API did not start"
            time.sleep(_PROBE_PAUSE_S)
        yield url
    finally:
        proc.kill()
        proc.wait()
