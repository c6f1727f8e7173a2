"""Which entity names a text mentions: whole words, case-insensitive.

The entity's key (its whitespace-normalised, lower-cased name) must occur in the text with no
letter or digit glued to either end, so "AI" is found in "the AI team" but not in "said".
"""

from __future__ import annotations

from collections.abc import Iterable

from graphrag.graph.models import normalize_space
from graphrag.text_scan import is_word_char

__all__ = ["entity_key", "names_in_text"]


def entity_key(name: str) -> str:
    """The merge key of an entity name (lower-case like Cypher's `toLower`)."""
    return normalize_space(name).lower()


def _occurs_as_words(key: str, haystack: str) -> bool:
    """Whether `key` occurs in `haystack` with no letter, digit or `_` glued to either end.

    Each search starts after the previous hit, so one key costs time linear in the text.
    """
    at = haystack.find(key)
    while at >= 0:
        end = at + len(key)
        glued_before = at > 0 and is_word_char(haystack[at - 1])
        glued_after = end < len(haystack) and is_word_char(haystack[end])
        if not glued_before and not glued_after:
            return True
        at = haystack.find(key, at + 1)
    return False


def names_in_text(names: Iterable[str], text: str) -> list[str]:
    """The distinct `names` found in `text` as whole words, longest first, then alphabetical."""
    haystack = normalize_space(text).lower()
    found: dict[str, str] = {}
    for name in names:
        key = entity_key(name)
        if not key or key in found:
            continue
        if _occurs_as_words(key, haystack):
            found[key] = normalize_space(name)
    return sorted(found.values(), key=lambda n: (-len(n), n.lower()))
