"""Name vectors of a base's entity keys, written at graph-build time for near matches.

Each base-level node gets the vector of its key once (the first chunk that names it pays for
it): the chunk's graph write says which of its keys have none yet, so later chunks naming the
same key cost nothing here. Chunks written at the same moment all find the key without one (the
first batch of a new base, whose documents name the same few entities): the threads of one
process then leave a key to the one already embedding it.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from graphrag.graph.store import GraphStore

__all__ = ["EmbedTexts", "KeysInHand", "write_name_vectors"]

EmbedTexts = Callable[[Sequence[str]], list[list[float]]]


class KeysInHand:
    """The (base, key) pairs some thread of this process is embedding and storing now."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: set[tuple[uuid.UUID, str]] = set()

    @contextmanager
    def take(self, kb_id: uuid.UUID, keys: Sequence[str]) -> Iterator[list[str]]:
        """The keys no other thread holds, held by the caller until the block ends."""
        with self._lock:
            mine = [key for key in dict.fromkeys(keys) if (kb_id, key) not in self._held]
            self._held.update((kb_id, key) for key in mine)
        try:
            yield mine
        finally:
            with self._lock:
                self._held.difference_update((kb_id, key) for key in mine)


def write_name_vectors(
    store: GraphStore,
    kb_id: uuid.UUID,
    missing: Sequence[str],
    embed: EmbedTexts,
    in_hand: KeysInHand,
) -> int:
    """Embed and store the vectors of the `missing` keys (as `write_chunk_graph` returned them)
    that no other thread sharing `in_hand` is storing; how many. A key whose base node went
    away meanwhile is skipped by the store."""
    with in_hand.take(kb_id, missing) as keys:
        if not keys:
            return 0
        vectors = embed(keys)
        store.set_key_vectors(kb_id, dict(zip(keys, vectors, strict=True)))
        return len(keys)
