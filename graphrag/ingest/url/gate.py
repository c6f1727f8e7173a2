"""How many URL fetches one API process runs at once, and on which threads.

A fetch may last up to `ingest.url_total_timeout_s`. On the web server's shared thread pool a
few dozen slow sites would hold every thread the other routes need, so fetches run on threads
of their own: at most `ingest.url_max_concurrent` at once, and `url_max_concurrent_per_key` of
one caller. A fetch over either cap is refused at once, never queued, with the time by which a
running fetch will have ended. The counts live in this process (a lock and a list): N API
processes admit N times as many fetches.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal, TypeVar

from graphrag.errors import UrlImportBusyError
from graphrag.settings import IngestSettings

__all__ = ["UrlImportGate"]

T = TypeVar("T")
Scope = Literal["api_key", "process"]  # which cap refused a fetch


@dataclass(eq=False)
class _Running:
    caller: Hashable
    ends_by: float  # monotonic time by which the fetch's deadline has passed


class UrlImportGate:
    """`gate.submit(caller, work)` runs `work` on the gate's threads, or refuses at once."""

    def __init__(self, ingest: IngestSettings) -> None:
        self.per_key = ingest.url_max_concurrent_per_key
        self.total = ingest.url_max_concurrent
        self.deadline_s = ingest.url_total_timeout_s
        self._lock = threading.Lock()
        self._running: list[_Running] = []
        self._threads = ThreadPoolExecutor(max_workers=self.total, thread_name_prefix="url-fetch")

    def submit(self, caller: Hashable, work: Callable[[], T]) -> Future[T]:
        """Start `work` for `caller`; UrlImportBusyError (429) if the caller, or the process,
        already runs as many fetches as allowed. The slot is held until `work` returns, even
        if whoever waits on the future gives up first."""
        slot = self._admit(caller)

        def run() -> T:
            try:
                return work()
            finally:
                self._leave(slot)  # before the result is out: whoever sees it sees the slot free

        future = self._threads.submit(run)
        future.add_done_callback(lambda _: self._leave(slot))  # cancelled before it started
        return future

    def running(self, caller: Hashable | None = None) -> int:
        """Fetches running now, of `caller` or of everyone."""
        with self._lock:
            return sum(caller is None or slot.caller == caller for slot in self._running)

    def close(self) -> None:
        """Drop fetches not started; running ones end by their own deadline."""
        self._threads.shutdown(wait=False, cancel_futures=True)

    def _admit(self, caller: Hashable) -> _Running:
        now = time.monotonic()
        with self._lock:
            mine = [slot for slot in self._running if slot.caller == caller]
            if len(mine) >= self.per_key:
                raise _busy("api_key", self.per_key, mine, now)
            if len(self._running) >= self.total:
                raise _busy("process", self.total, self._running, now)
            slot = _Running(caller, now + self.deadline_s)
            self._running.append(slot)
            return slot

    def _leave(self, slot: _Running) -> None:
        with self._lock:
            if slot in self._running:
                self._running.remove(slot)


_WHO: dict[Scope, str] = {"api_key": "this API key", "process": "this API process"}


def _busy(scope: Scope, limit: int, running: list[_Running], now: float) -> UrlImportBusyError:
    first_end = min(slot.ends_by for slot in running)
    return UrlImportBusyError(
        f"{_WHO[scope]} already runs {limit} URL imports at once; try again when one has ended",
        retry_after_s=max(1, math.ceil(first_end - now)),
        limit=limit,
        scope=scope,
    )
