"""Entity names reduced to a comparable key, and the candidate keys a question holds.

Two documents write "Marie Curie's", "MARIE CURIE" and "Marie  Curie" for one person; the key
(`name_key`) is the same for all three: accents dropped, case folded, a trailing possessive
removed, punctuation turned into spaces, spaces collapsed. Keys join the per-document nodes of
one base (cross-document links) and match a question's words to entity names.

Everything here scans its input once, character by character: no regular expression.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = ["QuestionKey", "name_key", "question_keys"]

_POSSESSIVE_ENDINGS = ("'s", "\u2019s", "'", "\u2019")


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _words(text: str) -> Iterator[str]:
    """Words of the text: runs of letters and digits; a trailing possessive is dropped."""
    for raw in text.split():
        for ending in _POSSESSIVE_ENDINGS:
            if raw.endswith(ending) and len(raw) > len(ending):
                raw = raw[: -len(ending)]
                break
        word: list[str] = []
        for ch in raw:
            if ch.isalnum():
                word.append(ch)
            elif word:
                yield "".join(word)
                word = []
        if word:
            yield "".join(word)


def name_tokens(name: str) -> list[str]:
    """The words of a name as its key holds them (folded, without accents or punctuation)."""
    return list(_words(_strip_accents(name).casefold()))


def name_key(name: str) -> str:
    """The comparison key of an entity name ("" when the name holds no letter or digit)."""
    return " ".join(name_tokens(name))


@dataclass(frozen=True)
class QuestionKey:
    """A candidate entity key found in a question, and the word positions it covers."""

    key: str
    start: int
    end: int  # exclusive

    @property
    def width(self) -> int:
        return self.end - self.start


def question_keys(
    question: str, names: Sequence[str], max_words: int, min_chars: int, max_keys: int
) -> list[QuestionKey]:
    """Every run of up to `max_words` consecutive words of the question, longest first, plus the
    keys of `names` (entity names extracted from the question by a model, when there are some).

    Runs shorter than `min_chars` characters are left out (they would match "a", "of" and the
    like); at most `max_keys` keys are returned, the longest runs first.
    """
    words = name_tokens(question)
    found: dict[str, QuestionKey] = {}
    for name in names:
        key = name_key(name)
        if len(key) >= min_chars:
            found.setdefault(key, QuestionKey(key, 0, 0))
    for width in range(min(max_words, len(words)), 0, -1):
        for start in range(len(words) - width + 1):
            key = " ".join(words[start : start + width])
            if len(key) >= min_chars:
                found.setdefault(key, QuestionKey(key, start, start + width))
    return list(found.values())[:max_keys]
