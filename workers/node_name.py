"""A worker's default Celery node name: its queues, then `@%h` (Celery puts in the host name).

Two workers on one host that consume different queues (the graph worker and the docparse
worker of the documented layout) get different names without being told, so their heartbeats,
pings and `/api/v1/system` entries never collide. Two workers with the same queues on one host
still need `--name`.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["default_node_name"]

# Characters a queue name keeps in a node name; any other (`@` above all, which splits the name
# from the host) becomes `_`.
_KEPT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _part(queue: str) -> str:
    return "".join(c if c in _KEPT else "_" for c in queue)


def default_node_name(queues: Sequence[str]) -> str:
    """`docparse-default@%h` for the queues `docparse,default`: each queue once, in the order
    given, joined by `-`."""
    parts = list(dict.fromkeys(_part(q.strip()) for q in queues if q.strip()))
    if not parts:
        raise ValueError("a worker needs at least one queue")
    return "-".join(parts) + "@%h"
