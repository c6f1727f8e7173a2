"""The passages an agent turn has gathered: numbered once, shown within a budget, cited back.

Every tool that returns chunks hands them here. A chunk keeps the number it first got, so the
model can cite `[n]` whichever step showed it; a chunk seen again is named, not repeated. Full
texts are shown while the turn's character budget lasts, then only excerpts.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from graphrag.chat.schemas import Reference
from graphrag.search.models import SearchHit
from graphrag.settings import ChatSettings

__all__ = ["Evidence"]

_CITE_OPEN, _CITE_CLOSE, _CITE_SEPARATOR = "[", "]", ","


def _citations(answer: str, highest: int) -> set[int]:
    """The numbers up to `highest` cited as `[n]` or `[n, m, ...]` in `answer` (digits, commas
    and blanks only; a number longer than `highest` is not converted).

    Scanned forward once: the text inside a bracket holds no `[`, so no character is read twice.
    """
    numbers: set[int] = set()
    pos = answer.find(_CITE_OPEN)
    while pos >= 0:
        close = pos + 1
        while close < len(answer) and (
            answer[close].isdecimal() or answer[close].isspace() or answer[close] == _CITE_SEPARATOR
        ):
            close += 1
        if answer.startswith(_CITE_CLOSE, close):
            parts = [part.strip() for part in answer[pos + 1 : close].split(_CITE_SEPARATOR)]
            width = len(str(highest))
            if all(part.isdecimal() for part in parts):
                numbers.update(int(p) for p in parts if len(p.lstrip("0")) <= width)
        pos = answer.find(_CITE_OPEN, close)
    return numbers


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
        highest = len(self.references)
        return any(1 <= n <= highest for n in _citations(answer, highest))
