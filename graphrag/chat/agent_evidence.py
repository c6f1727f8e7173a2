"""The passages an agent turn has gathered: numbered once, shown within a budget, cited back.

Every tool that returns chunks hands them here. A chunk keeps the number it first got, so the
model can cite `[n]` whichever step showed it; a chunk seen again is named, not repeated. Full
texts are shown while the turn's character budget lasts, then only excerpts.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from typing import Any

from graphrag.chat.schemas import Reference
from graphrag.search.models import SearchHit
from graphrag.settings import ChatSettings

__all__ = ["Evidence"]

_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


class Evidence:
    """Numbered passages of one agent turn and the references they become."""

    def __init__(self, chat: ChatSettings) -> None:
        self._budget = chat.context_max_chars
        self._excerpt_chars = chat.reference_excerpt_chars
        self._numbers: dict[uuid.UUID, int] = {}
        self.references: list[Reference] = []

    def add(self, hits: Sequence[SearchHit]) -> list[dict[str, Any]]:
        """The hits as numbered passages for a tool's output, registering the new ones."""
        passages: list[dict[str, Any]] = []
        for hit in hits:
            text = hit.content.strip()
            if not text:
                continue
            known = self._numbers.get(hit.chunk_id)
            if known is not None:
                passages.append({"n": known, "shown_before": True})
                continue
            passages.append(self._register(hit, text))
        return passages

    def _register(self, hit: SearchHit, text: str) -> dict[str, Any]:
        n = len(self.references) + 1
        self._numbers[hit.chunk_id] = n
        excerpt = text[: self._excerpt_chars]
        self.references.append(Reference.from_hit(n, hit, excerpt))
        shown = text if len(text) <= self._budget else excerpt
        self._budget = max(0, self._budget - len(shown))
        passage: dict[str, Any] = {"n": n, "source": hit.file_name, "text": shown}
        if hit.page:
            passage["page"] = hit.page
        if len(shown) < len(text):
            passage["cut"] = True
        return passage

    def cited(self, answer: str) -> bool:
        """Whether the answer cites at least one gathered passage by its number."""
        numbers = {
            int(part) for group in _CITATION.findall(answer) for part in re.split(r"\s*,\s*", group)
        }
        return any(1 <= n <= len(self.references) for n in numbers)
