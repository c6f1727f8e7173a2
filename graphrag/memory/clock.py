"""Time for the memory: one injectable clock, so tests can move time by days.

Archival facts keep times as epoch milliseconds; elapsed time is always the difference of two
such numbers (true elapsed time, never a component of a calendar duration).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol

__all__ = ["MS_PER_S", "Clock", "datetime_from_ms", "system_clock"]

MS_PER_S = 1000


class Clock(Protocol):
    """Returns the current time as epoch milliseconds."""

    def __call__(self) -> int: ...


def system_clock() -> int:
    """The wall clock, in epoch milliseconds."""
    return time.time_ns() // 1_000_000


def datetime_from_ms(epoch_ms: int) -> datetime:
    """An aware UTC datetime for epoch milliseconds."""
    return datetime.fromtimestamp(epoch_ms / MS_PER_S, tz=UTC)
