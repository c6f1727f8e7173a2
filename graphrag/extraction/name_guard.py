"""Entity names a weak model copies from the prompt instead of reading them in the chunk.

Two lists make a name a placeholder:
- always: `extraction.placeholder_names` (schema words such as `entity`, `name`, `<entity>`);
- unless the chunk's text holds it: the names the prompt shows as examples, that is the
  double-quoted phrases and `<...>` slots of the extraction template's system text, and the
  entity names of the knowledge base's few-shot example.

Names compare by `name_key`: case-folded, inner whitespace as one space, `_` and `-` as spaces,
and the quotes and brackets around them removed, so `<Entity>`, `"entity"` and `[entity]` are
the same placeholder. A name with no letter or digit at all is no name (`has_word_char`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from graphrag.graph.models import normalize_space

__all__ = ["NameGuard", "has_word_char", "name_key", "prompt_example_names"]

# Characters that wrap a placeholder in a template or a copied schema: <entity>, "name", [node].
_WRAPPERS = "<>[]{}()\"'`"
_SPACERS = str.maketrans({"_": " ", "-": " "})
_SLOT_OPEN, _SLOT_CLOSE = "<", ">"
_QUOTE = '"'


def name_key(text: str) -> str:
    """The form in which a name is compared with the placeholder lists."""
    return normalize_space(text.strip().strip(_WRAPPERS).translate(_SPACERS)).casefold()


def has_word_char(text: str) -> bool:
    """Whether `text` holds at least one letter or digit (any script)."""
    return any(char.isalnum() for char in text)


def _quoted(text: str) -> Iterable[str]:
    # Between every other pair of double quotes; a phrase running over a line is not a name.
    for index, piece in enumerate(text.split(_QUOTE)):
        if index % 2 == 1 and "\n" not in piece:
            yield piece


def _slots(text: str) -> Iterable[str]:
    start = text.find(_SLOT_OPEN)
    while start >= 0:
        end = text.find(_SLOT_CLOSE, start + 1)
        if end < 0:
            return
        slot = text[start : end + 1]
        if "\n" not in slot:
            yield slot
        start = text.find(_SLOT_OPEN, end + 1)


def prompt_example_names(prompt_text: str, max_chars: int) -> list[str]:
    """The example names a prompt shows: its double-quoted phrases and `<...>` slots (those of
    at most `max_chars` characters holding a letter or digit), in order, each once."""
    found: dict[str, str] = {}
    for candidate in (*_quoted(prompt_text), *_slots(prompt_text)):
        key = name_key(candidate)
        if key and len(candidate) <= max_chars and has_word_char(candidate):
            found.setdefault(key, candidate)
    return list(found.values())


class NameGuard(BaseModel):
    """The placeholder keys for one chunk: `always`, and the example names its text lacks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    placeholders: frozenset[str] = Field(default_factory=frozenset)

    @classmethod
    def for_chunk(
        cls, always: Sequence[str], examples: Sequence[str], chunk_text: str
    ) -> NameGuard:
        """The guard of a chunk whose text is `chunk_text`: an example name counts as a
        placeholder only when that text does not contain it (case and spacing aside)."""
        text_key = name_key(chunk_text)
        keys = {name_key(name) for name in always}
        keys.update(key for key in map(name_key, examples) if key and key not in text_key)
        keys.discard("")
        return cls(placeholders=frozenset(keys))

    def is_placeholder(self, name: str) -> bool:
        """Whether `name` is one of the guard's placeholders."""
        return name_key(name) in self.placeholders
