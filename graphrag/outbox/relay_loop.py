"""A background thread that runs relay passes: a full one every `relay_interval_s`, and a
sending one at once when kicked.

The API kicks it right after a commit that wrote task rows (low latency, and the request never
waits on the broker); a worker kicks it when a task settles (its in-flight slot is free again).
Kicks that come while a pass runs, or within `kick_gap_s` after a sending pass, are served by
one pass: a worker that settles many tasks a second does not run a pass for each. A pass that
finds another relay's pass under way tries again after `lock_retry_s`.
"""

from __future__ import annotations

import logging
import threading
import time

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from graphrag.errors import GraphragError
from graphrag.outbox.relay import relay_once
from graphrag.settings import OutboxSettings
from graphrag.task_queue import TaskQueue

__all__ = ["RelayLoop"]

log = logging.getLogger(__name__)


class RelayLoop:
    """Relay passes on a daemon thread until `stop()`."""

    def __init__(
        self, sessions: sessionmaker[Session], sender: TaskQueue, settings: OutboxSettings
    ) -> None:
        self._sessions = sessions
        self._sender = sender
        self._settings = settings
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="outbox-relay", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def kick(self) -> None:
        """Run a pass as soon as possible (returns at once)."""
        self._wake.set()

    def stop(self, timeout_s: float) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def _run(self) -> None:
        interval = self._settings.relay_interval_s
        next_sweep = time.monotonic()
        while not self._stopping.is_set():
            self._wake.wait(max(next_sweep - time.monotonic(), 0.0))
            self._wake.clear()
            if self._stopping.is_set():
                return
            sweep = time.monotonic() >= next_sweep
            try:
                report = relay_once(self._sessions, self._sender, self._settings, sweep=sweep)
            except (SQLAlchemyError, GraphragError) as exc:
                # The database is the source of truth: without it there is nothing to relay yet.
                log.warning("outbox relay pass failed: %s", exc)
                if sweep:
                    next_sweep = time.monotonic() + interval
                continue
            if not report.ran:
                # Another relay held the lock: its pass may have read the due rows before this
                # process committed its own, so try again shortly, not after the whole gap. A
                # due full pass stays due: it is the one that re-arms a lost broker's rows.
                self._wake.set()
                self._stopping.wait(self._settings.lock_retry_s)
                continue
            if sweep:
                next_sweep = time.monotonic() + interval
            if report.more:
                self._wake.set()  # a full batch went out: more is due at once
            if not sweep:
                self._stopping.wait(self._settings.kick_gap_s)
