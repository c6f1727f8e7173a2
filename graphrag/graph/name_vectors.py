"""Name vectors of a base's entity keys, written at graph-build time for near matches.

Each base-level node gets the vector of its key once (the first chunk that names it pays for
it); later chunks naming the same key find it already there.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from graphrag.graph.models import GraphData
from graphrag.graph.names import name_key
from graphrag.graph.store import GraphStore

__all__ = ["EmbedTexts", "write_name_vectors"]

EmbedTexts = Callable[[Sequence[str]], list[list[float]]]


def write_name_vectors(
    store: GraphStore, kb_id: uuid.UUID, graph: GraphData, embed: EmbedTexts
) -> int:
    """Embed and store the keys of this graph's entities that have no vector yet; how many."""
    names = [n.name for n in graph.nodes] + [
        name for r in graph.relations for name in (r.node1, r.node2)
    ]
    keys = [key for key in dict.fromkeys(name_key(name) for name in names) if key]
    missing = store.keys_without_vector(kb_id, keys)
    if not missing:
        return 0
    vectors = embed(missing)
    store.set_key_vectors(kb_id, dict(zip(missing, vectors, strict=True)))
    return len(missing)
