"""Which entity names a text mentions: whole words, case-insensitive.

The entity's key (its whitespace-normalised, lower-cased name) must occur in the text with no
letter or digit glued to either end, so "AI" is found in "the AI team" but not in "said".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from graphrag.graph.models import normalize_space

__all__ = ["entity_key", "names_in_text"]


def entity_key(name: str) -> str:
    """The merge key of an entity name (lower-case like Cypher's `toLower`)."""
    return normalize_space(name).lower()


def names_in_text(names: Iterable[str], text: str) -> list[str]:
    """The distinct `names` found in `text` as whole words, longest first, then alphabetical."""
    haystack = normalize_space(text).lower()
    found: dict[str, str] = {}
    for name in names:
        key = entity_key(name)
        if not key or key in found:
            continue
        if re.search(r"(?<!\w)" + re.escape(key) + r"(?!\w)", haystack):
            found[key] = normalize_space(name)
    return sorted(found.values(), key=lambda n: (-len(n), n.lower()))
