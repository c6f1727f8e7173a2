"""The memory's part of a system prompt: core memory, then the facts recalled."""

from __future__ import annotations

from pathlib import Path

from graphrag.llm.prompts import load_prompt
from graphrag.memory.core_memory import MEMORY_BLOCK_PROMPT, CoreMemoryView, render_core_block
from graphrag.memory.recall import SessionRecall

__all__ = ["render_memory_block"]


def render_memory_block(
    core: CoreMemoryView, recall: SessionRecall | None, templates: Path | None = None
) -> str:
    """Core memory sections, then one line per recalled fact; empty when there is neither."""
    parts = [render_core_block(core, templates)]
    if recall is not None and recall.facts:
        lines = "\n".join(f"- {r.scored.fact.text}" for r in recall.facts)
        recalled = load_prompt(MEMORY_BLOCK_PROMPT, templates).render_fragment(
            "recalled_facts", facts=lines
        )
        parts.append(recalled.strip())
    return "\n\n".join(p for p in parts if p)
