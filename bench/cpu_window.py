"""CPU seconds spent by each kind of process between two points in time (Linux `/proc`).

A bench that is CPU-bound says so with numbers: which process took the machine's cores while
the wall clock ran. A process is counted under the nearest of its ancestors the bench named
(a worker and its pool children, the API), else by its command name (PostgreSQL backends,
Redis, the Neo4j JVM), else as `other`.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CpuSpent", "CpuWindow"]

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


def _kind(pid: int, processes: Mapping[int, _Process], roots: Mapping[int, str]) -> str:
    seen = pid
    while seen in processes and seen not in roots:
        seen = processes[seen].parent
    if seen in roots:
        return roots[seen]
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
