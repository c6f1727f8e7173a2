"""The trace of one chunk's extraction: what was read, in counts and a few names.

Stored on the chunk when it settles (`chunks.graph_trace`) and returned with it by the chunk
API, so a document whose graph looks thin can be read chunk by chunk without the worker's logs.
"""

from __future__ import annotations

from typing import Any

from graphrag.extraction.output_parser import ParseOutcome

__all__ = ["chunk_trace"]


def chunk_trace(outcome: ParseOutcome, finish_reason: str | None, sample: int) -> dict[str, Any]:
    """Counts of what the answer gave and the cleanup kept or dropped, the first `sample`
    entity names and relations, how the answer parsed and why the model stopped."""
    data = outcome.data
    return {
        "nodes": len(data.nodes),
        "relations": len(data.relations),
        "dropped_nodes": outcome.dropped_nodes,
        "dropped_relations": outcome.dropped_relations,
        "names": [node.name for node in data.nodes[:sample]],
        "relation_samples": [[r.node1, r.type, r.node2] for r in data.relations[:sample]],
        "output": outcome.kind.value,
        "finish_reason": finish_reason,
    }
