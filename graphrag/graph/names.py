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

__all__ = ["QuestionKey", "capitalised_spans", "name_key", "name_tokens", "question_keys"]

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


_EDGE_PUNCTUATION = "\"'()[]{},;:.?!\u201c\u201d\u2018\u2019"
_SPAN_ENDS = tuple(",;:.?!)")


def capitalised_spans(text: str) -> list[str]:
    """Runs of capitalised words: the names a text likely holds, found without a model.

    Every sentence starts with a capital, so a run that starts the text is given both whole and
    without its first word, and a run that is only the text's first word is left out.
    """
    spans: list[str] = []
    current: list[str] = []
    start = 0

    def close() -> None:
        if start == 0:
            current.pop(0)
        if current:
            spans.append(" ".join(current))

    for position, raw in enumerate(text.split()):
        word = raw.strip(_EDGE_PUNCTUATION)
        capital = word[:1].isupper()
        if capital:
            if not current:
                start = position
            current.append(word)
        if current and (not capital or raw.endswith(_SPAN_ENDS)):
            if start == 0 and len(current) > 1:
                spans.append(" ".join(current))
            close()
            current = []
    if current:
        if start == 0 and len(current) > 1:
            spans.append(" ".join(current))
        close()
    return list(dict.fromkeys(spans))
