"""The memory's part of a system prompt: core memory, then the facts recalled."""

from __future__ import annotations

from graphrag.memory.core_memory import CoreMemoryView, render_core_block
from graphrag.memory.recall import SessionRecall

__all__ = ["render_memory_block"]


def render_memory_block(core: CoreMemoryView, recall: SessionRecall | None) -> str:
    """Core memory sections, then one line per recalled fact; empty when there is neither."""
    parts = [render_core_block(core)]
    if recall is not None and recall.facts:
        lines = [f"- {r.scored.fact.text}" for r in recall.facts]
        parts.append("# Things remembered from earlier sessions\n" + "\n".join(lines))
    return "\n\n".join(p for p in parts if p)
