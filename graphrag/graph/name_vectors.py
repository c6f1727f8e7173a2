"""Name vectors of a base's entity keys, written at graph-build time for near matches.

Each base-level node gets the vector of its key once (the first chunk that names it pays for
it): the chunk's graph write says which of its keys have none yet, so later chunks naming the
same key cost nothing here.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from graphrag.graph.store import GraphStore

__all__ = ["EmbedTexts", "write_name_vectors"]

EmbedTexts = Callable[[Sequence[str]], list[list[float]]]


def write_name_vectors(
    store: GraphStore, kb_id: uuid.UUID, missing: Sequence[str], embed: EmbedTexts
) -> int:
    """Embed and store the vectors of the `missing` keys (as `write_chunk_graph` returned them);
    how many. A key whose base node went away meanwhile is skipped by the store."""
    keys = list(dict.fromkeys(missing))
    if not keys:
        return 0
    vectors = embed(keys)
    store.set_key_vectors(kb_id, dict(zip(keys, vectors, strict=True)))
    return len(keys)
