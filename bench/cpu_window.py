"""CPU seconds spent by each kind of process between two points in time (Linux `/proc`).

A bench that is CPU-bound says so with numbers: which process took the machine's cores while
the wall clock ran. A process is counted under the nearest of its ancestors the bench named
(a worker and its pool children, the API), else by its command name (PostgreSQL backends,
Redis, the Neo4j JVM), else as `other`.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CpuSpent", "CpuWindow", "wait_quiet"]

_PROC = Path("/proc")
_TICK = os.sysconf("SC_CLK_TCK")
_BY_COMMAND = {"postgres": "postgres", "redis-server": "redis", "java": "neo4j"}


@dataclass(frozen=True)
class _Process:
    parent: int
    command: str
    user_s: float
    system_s: float  # in the kernel on the process's behalf: system calls, lock waits, switches


def _processes() -> dict[int, _Process]:
    found: dict[int, _Process] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        command = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        # fields[1] is the parent; [11], [12]: user and system ticks (proc(5), from field 3 on)
        user, system = int(fields[11]) / _TICK, int(fields[12]) / _TICK
        found[int(entry.name)] = _Process(int(fields[1]), command, user, system)
    return found


def _root(pid: int, processes: Mapping[int, _Process], roots: Collection[int]) -> int | None:
    """The nearest of `roots` among the process and its ancestors (None: none of them)."""
    seen = pid
    while seen in processes and seen not in roots:
        seen = processes[seen].parent
    return seen if seen in roots else None


def _kind(pid: int, processes: Mapping[int, _Process], roots: Mapping[int, str]) -> str:
    root = _root(pid, processes, roots)
    if root is not None:
        return roots[root]
    return _BY_COMMAND.get(processes[pid].command, "other")


def _machine_s() -> tuple[float, float, float]:
    """(idle, stolen, total) CPU seconds of the machine since boot, all cores; stolen is the
    time a hypervisor ran something else on our cores (proc(5): idle is field 4, steal 8)."""
    ticks = [int(v) for v in (_PROC / "stat").read_text().split("\n", 1)[0].split()[1:]]
    return ticks[3] / _TICK, ticks[7] / _TICK, sum(ticks[:8]) / _TICK


@dataclass(frozen=True)
class CpuSpent:
    """What the window saw: CPU seconds by kind (user + system) and the system part of them,
    and the machine's idle, stolen and total core-seconds."""

    by_kind: dict[str, float]
    system_by_kind: dict[str, float]
    idle_s: float
    stolen_s: float
    cores_s: float


class CpuWindow:
    """`start()`, the work, then `stop()`: CPU seconds by kind in between, and the machine's
    idle and stolen core-seconds.

    A process born inside the window counts whole; one that ended inside it is not counted.
    """

    def __init__(self, roots: Mapping[int, str]) -> None:
        self.roots = dict(roots)
        self._start: dict[int, _Process] = {}
        self._machine = (0.0, 0.0, 0.0)

    def start(self) -> None:
        self._start = _processes()
        self._machine = _machine_s()

    def stop(self) -> CpuSpent:
        """What was spent since `start()`."""
        processes = _processes()
        idle, stolen, total = (b - a for a, b in zip(self._machine, _machine_s(), strict=True))
        spent: defaultdict[str, float] = defaultdict(float)
        system: defaultdict[str, float] = defaultdict(float)
        for pid, process in processes.items():
            kind = _kind(pid, processes, self.roots)
            before = self._start.get(pid)
            user_0, system_0 = (before.user_s, before.system_s) if before else (0.0, 0.0)
            spent[kind] += process.user_s - user_0 + process.system_s - system_0
            system[kind] += process.system_s - system_0
        return CpuSpent(dict(spent), dict(system), idle, stolen, total)


def _cpu_under(roots: Collection[int]) -> float:
    """CPU seconds (user + system) of these processes and their descendants alive now."""
    processes = _processes()
    return sum(
        p.user_s + p.system_s
        for pid, p in processes.items()
        if _root(pid, processes, roots) is not None
    )


def wait_quiet(
    roots: Collection[int], busy_share: float, interval_s: float, timeout_s: float
) -> bool:
    """Wait until these processes (children included) spent under `busy_share` of one core over
    `interval_s`: started workers finish opening their connections before the clock starts.
    False: still busy after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    before = _cpu_under(roots)
    while time.monotonic() < deadline:
        time.sleep(interval_s)
        now = _cpu_under(roots)
        if now - before < busy_share * interval_s:
            return True
        before = now
    return False
