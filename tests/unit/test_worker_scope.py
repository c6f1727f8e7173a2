"""A worker process has one scope, sized for its threads; a forked child builds its own."""

from __future__ import annotations

import subprocess
import sys

import pytest

from graphrag.settings import get_settings

pytestmark = pytest.mark.unit

# Run apart: the scope is per process, and the test forks.
_THREADS = 64
_FORKED = """
import os
from workers.scope import process_scope, share_among_threads

share_among_threads({threads})
parent = process_scope()
assert process_scope() is parent
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    child = process_scope()
    answer = (child is not parent, child.pid == os.getpid(), child is process_scope())
    os.write(write, repr(answer).encode())
    os._exit(0)
os.waitpid(pid, 0)
print(parent.settings.database.pool_size, parent.settings.neo4j.max_connection_pool_size)
print(os.read(read, 100).decode())
"""


def test_one_scope_per_process_sized_for_its_threads_and_rebuilt_after_a_fork() -> None:
    code = _FORKED.format(threads=_THREADS)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    sizes, child = result.stdout.splitlines()
    configured = get_settings()
    assert [int(n) for n in sizes.split()] == [
        max(configured.database.pool_size, _THREADS),
        max(configured.neo4j.max_connection_pool_size, _THREADS),
    ]
    assert child == "(True, True, True)"
