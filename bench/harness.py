"""What every benchmark prints: where it ran, with which parameters, and candidate/baseline ratios.

Benchmarks compare a candidate with a baseline measured in the same run on the same data, so a
busy machine slows both; they print ratios, never pass/fail thresholds.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

from graphrag.settings import project_root

__all__ = ["COUNT_UNDER_LABEL", "median", "print_header", "print_ratio", "services_env", "timed"]

T = TypeVar("T")

# Nodes under a namespace label and their relations to entities (benches check what they wrote
# or removed; the label is spliced, as in index DDL).
COUNT_UNDER_LABEL = """
MATCH (n:{label})
RETURN count(n) AS nodes, sum(COUNT {{ (n)-[]->(:GraphEntity) }}) AS relations
"""


def _git_revision() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=project_root(),
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=project_root(),
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return out.stdout.strip() + ("+dirty" if dirty else "")


def print_header(name: str, params: Mapping[str, object]) -> None:
    """The machine, its load right now, the code revision and the benchmark's parameters."""
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"# bench {name}")
    print(
        f"# machine: nproc={usable} load_avg(1,5,15m)={load} "
        f"python={platform.python_version()} {platform.system()}-{platform.machine()} "
        f"rev={_git_revision()}"
    )
    print("# params: " + " ".join(f"{key}={value}" for key, value in params.items()))
    sys.stdout.flush()


def print_ratio(name: str, candidate: str, baseline: str, ratio: float, detail: str) -> None:
    """`name: candidate/baseline = 0.42x (detail)`, the one line a benchmark is read by."""
    print(f"{name}: {candidate}/{baseline} = {ratio:.2f}x ({detail})")
    sys.stdout.flush()


def timed(work: Callable[[], T]) -> tuple[T, float]:
    """The result of `work()` and the wall seconds it took."""
    start = time.perf_counter()
    result = work()
    return result, time.perf_counter() - start


def median(values: list[float]) -> float:
    return statistics.median(values)


def services_env() -> dict[str, str]:
    """The environment of the running local services (started first if they are not up).

    `deploy/local/services.py start` is idempotent: it only starts what does not answer. Its
    chatter is shown only if it fails, so the benchmark's output stays its own.
    """
    root = project_root()
    done = subprocess.run(
        [sys.executable, str(root / "deploy/local/services.py"), "start", "--neo4j"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"local services did not start:\n{done.stdout}{done.stderr}")
    lines = (root / "data" / "services.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)
