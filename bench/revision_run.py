"""Another revision's copy of a benchmark, run in the same sitting on this machine's services.

The revision is checked out with `git worktree` into a temporary folder, this checkout's `.venv`
and `data/` are linked into it (the same Python environment and the same running services),
and its own code goes first on `PYTHONPATH`, so the benchmark, its workers and its API all run
that revision. Its output lines are returned for the caller to compare with its own rounds.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from graphrag.settings import project_root

__all__ = ["run_bench_at"]

# What the revision shares with this checkout: its environment and its running services.
_SHARED = (".venv", "data")


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(project_root()), *args], capture_output=True, text=True, check=False
    )


@contextmanager
def _checkout(revision: str) -> Iterator[Path]:
    """A worktree of `revision` with the shared folders linked in; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="bench-revision-"))
    tree = folder / "tree"
    added = _git("worktree", "add", "--detach", "--quiet", str(tree), revision)
    if added.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise SystemExit(f"cannot check out {revision}: {added.stderr.strip()}")
    try:
        for name in _SHARED:
            (tree / name).symlink_to(project_root() / name)
        yield tree
    finally:
        # The links go first, so that removing the worktree cannot reach what they point to.
        for name in _SHARED:
            (tree / name).unlink(missing_ok=True)
        _git("worktree", "remove", "--force", str(tree))
        shutil.rmtree(folder, ignore_errors=True)


def run_bench_at(
    revision: str,
    script: str,
    args: Sequence[str],
    environ: Mapping[str, str],
    timeout_s: float,
) -> list[str]:
    """The output lines of `script` (a path from the repository root) as of `revision`, run
    with `args` in `environ` (the caller's own, before it pointed it at its services); its
    error output is shown if it fails."""
    with _checkout(revision) as tree:
        env = {**environ, "PYTHONPATH": str(tree)}
        try:
            done = subprocess.run(
                [sys.executable, str(tree / script), *args],
                cwd=tree,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise SystemExit(f"{script} at {revision}: no end after {timeout_s:.0f}s") from exc
    if done.returncode != 0:
        raise SystemExit(f"{script} at {revision} failed:\n{done.stdout}{done.stderr}")
    return done.stdout.splitlines()
