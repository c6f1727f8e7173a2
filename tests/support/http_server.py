"""Serve an ASGI app with uvicorn from a background thread on a free loopback port."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn

__all__ = ["ThreadedServer", "free_port"]

STARTUP_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ThreadedServer:
    """A real HTTP server for tests: `with ThreadedServer(app) as url: ...`."""

    def __init__(self, app: Any, **options: Any) -> None:
        # `options`: more of uvicorn's (e.g. `api.serving.server_options`, as `graphrag serve`).
        self.port = free_port()
        self._server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", **options)
        )
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> str:
        self._thread.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("test HTTP server did not start")
            time.sleep(0.05)
        return self.url

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=STARTUP_TIMEOUT_S)
