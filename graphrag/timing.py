"""Elapsed time in milliseconds, measured one way (a monotonic clock) everywhere it is reported."""

from __future__ import annotations

from time import perf_counter

__all__ = ["elapsed_ms"]

_MS_PER_S = 1000.0


def elapsed_ms(start: float, end: float | None = None) -> float:
    """Milliseconds from `start`, a `time.perf_counter()` reading, to `end` (default: now)."""
    return ((perf_counter() if end is None else end) - start) * _MS_PER_S
