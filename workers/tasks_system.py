"""Housekeeping tasks: a ping to prove the queue round trip."""

from __future__ import annotations

import os
import socket

from workers.celery_app import app


@app.task(name="system.ping")
def ping(payload: str) -> dict[str, str | int]:
    """Echo the payload with the worker's identity, so a caller sees a real worker answered."""
    return {"payload": payload, "pid": os.getpid(), "host": socket.gethostname()}
