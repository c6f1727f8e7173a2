"""Slots of the scripted LLM server: a limit on requests served at once, like llama.cpp's
`--parallel`, and a meter of what arrived and what was served at once.

`received` counts requests inside the server (waiting for a slot or served); `active` counts
those holding a slot. A client that respects the server's slots never makes `peak_received`
exceed them; `mean_active` is the time-weighted mean of `active` between the first arrival and
the last departure.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from pydantic import BaseModel

__all__ = ["SlotGate", "SlotStats"]


class SlotStats(BaseModel):
    """What the meter saw since its last reset."""

    calls: int
    received: int
    active: int
    peak_received: int
    peak_active: int
    mean_active: float
    busy_s: float
    span_s: float
    first_ago_s: float | None = None  # how long ago the first request arrived (None: none yet)
    last_ago_s: float | None = None  # how long ago the last one left


class SlotGate:
    """Holds each chat request in one of `slots` slots (None: unlimited) and measures."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._semaphores: dict[int, asyncio.Semaphore] = {}
        self.reset()

    def reset(self) -> None:
        """Forget every count (the slot limit itself comes from the script)."""
        with self._lock:
            self._calls = self._received = self._active = 0
            self._peak_received = self._peak_active = 0
            self._area = 0.0  # integral of `active` over time
            self._changed: float | None = None
            self._first: float | None = None
            self._last: float | None = None

    def _move(self, received: int, active: int) -> None:
        now = time.monotonic()
        with self._lock:
            if self._changed is not None:
                self._area += self._active * (now - self._changed)
            self._changed = now
            if self._first is None:
                self._first = now
            self._received += received
            self._active += active
            self._calls += max(active, 0)
            self._peak_received = max(self._peak_received, self._received)
            self._peak_active = max(self._peak_active, self._active)
            if received < 0:
                self._last = now

    def _semaphore(self, slots: int) -> asyncio.Semaphore:
        with self._lock:
            return self._semaphores.setdefault(slots, asyncio.Semaphore(slots))

    @asynccontextmanager
    async def slot(self, slots: int | None, hold_s: float) -> AsyncIterator[None]:
        """Wait for a slot, hold it `hold_s` seconds, then for the body (the answer)."""
        self._move(1, 0)
        try:
            if slots is None:
                async with self._held(hold_s):
                    yield
            else:
                async with self._semaphore(slots), self._held(hold_s):
                    yield
        finally:
            self._move(-1, 0)

    @asynccontextmanager
    async def _held(self, hold_s: float) -> AsyncIterator[None]:
        self._move(0, 1)
        try:
            if hold_s:
                await asyncio.sleep(hold_s)
            yield
        finally:
            self._move(0, -1)

    def stats(self) -> SlotStats:
        """The counts now; the mean is over the span from first arrival to last departure."""
        now = time.monotonic()
        with self._lock:
            span = (self._last or 0.0) - (self._first or 0.0)
            return SlotStats(
                calls=self._calls,
                received=self._received,
                active=self._active,
                peak_received=self._peak_received,
                peak_active=self._peak_active,
                mean_active=self._area / span if span > 0 else 0.0,
                busy_s=self._area,
                span_s=max(span, 0.0),
                first_ago_s=None if self._first is None else now - self._first,
                last_ago_s=None if self._last is None else now - self._last,
            )
