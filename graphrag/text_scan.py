"""Linear-time scanning of untrusted text (uploads, requests, model answers), without regexes.

A backtracking regex with a lazy `.*?` before a closing group, or a quantifier next to one that
can match the same characters, takes quadratic or exponential time on crafted input. The helpers
here only move forward: each `str.find` starts where the previous one stopped (or reuses its
answer), so the work on a text of n characters stays proportional to n whatever it holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

__all__ = [
    "Block",
    "NextFinder",
    "ascii_lower",
    "blocks",
    "collapse_spaces",
    "fenced_bodies",
    "is_word_char",
    "last_closing_end",
    "line_groups",
    "remove_closed_blocks",
    "skip_spaces",
    "split_on_any",
]

# Only A-Z are folded: the result keeps the text's length, so positions found in it are valid
# in the original (str.lower() turns some characters into two).
_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


def ascii_lower(text: str) -> str:
    """`text` with A-Z lower-cased and every other character kept: same length, same positions."""
    return text.translate(_ASCII_LOWER)


def skip_spaces(text: str, pos: int) -> int:
    """The first position at or after `pos` that is not whitespace (len(text) if none)."""
    end = len(text)
    while pos < end and text[pos].isspace():
        pos += 1
    return pos


def collapse_spaces(text: str) -> str:
    """`text` with every run of whitespace made one space, the outer runs included.

    What `re.sub(r"\\s+", " ", text)` gives: a run at either end leaves one space, so text
    split across inline markup ("a <b>b</b>") keeps the space between its words.
    """
    if not text:
        return text
    words = text.split()  # str.split() splits on the characters \s matches, in one pass
    if not words:
        return " "
    lead = " " if text[0].isspace() else ""
    trail = " " if text[-1].isspace() else ""
    return lead + " ".join(words) + trail


def line_groups(text: str) -> list[str]:
    """The runs of non-blank lines of `text`, each line stripped, a run joined by newlines.

    A line holding only whitespace ends a run, as a split on `\\n\\s*\\n` would, but each line
    is read once.
    """
    groups: list[str] = []
    current: list[str] = []
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped:
            current.append(stripped)
        elif current:
            groups.append("\n".join(current))
            current = []
    if current:
        groups.append("\n".join(current))
    return groups


class NextFinder:
    """`text.find(needle, pos)` for positions that only grow, reusing the previous answer.

    A needle that is absent is searched for once, not once per call, which keeps loops that ask
    "where is the next closing tag?" after every opening tag linear.
    """

    def __init__(self, text: str, needle: str) -> None:
        self._text = text
        self._needle = needle
        self._found = -2  # not searched yet

    def find(self, pos: int) -> int:
        """The first occurrence at or after `pos`, or -1."""
        if self._found == -1 or self._found >= pos:
            return self._found
        self._found = self._text.find(self._needle, pos)
        return self._found


def is_word_char(char: str) -> bool:
    """A letter, digit or underscore (what a regex `\\w` matches)."""
    return char.isalnum() or char == "_"


def last_closing_end(text: str, names: Iterable[str]) -> int:
    """Where the last `</name>` of `names` ends (case-insensitive), or -1 when there is none."""
    folded = ascii_lower(text)
    ends = [at + len(name) + 3 for name in names if (at := folded.rfind(f"</{name.lower()}>")) >= 0]
    return max(ends, default=-1)


_FENCE = "```"


def fenced_bodies(text: str) -> list[str]:
    """The bodies of the Markdown code fences of `text`; an unclosed fence runs to the end.

    The info string (`json`, `python`...) and the blanks after it are not part of the body.
    """
    bodies: list[str] = []
    end = len(text)
    pos = text.find(_FENCE)
    while pos >= 0:
        at = pos + len(_FENCE)
        while at < end and (is_word_char(text[at]) or text[at] == "-"):
            at += 1
        while at < end and text[at] in " \t":
            at += 1
        if at < end and text[at] == "\n":
            at += 1
        close = text.find(_FENCE, at)
        if close < 0:
            bodies.append(text[at:])
            break
        bodies.append(text[at:close])
        pos = text.find(_FENCE, close + len(_FENCE))
    return bodies


class Block(NamedTuple):
    """A region of the text: where it starts and ends, and where its body starts and ends."""

    start: int
    end: int
    body_start: int
    body_end: int


def blocks(text: str, opening: str, closing: str, *, until_end: bool) -> Iterator[Block]:
    """Each `opening ... closing` region, in order, matched case-insensitively (ASCII tags).

    The body runs to the first `closing` after its opening. With `until_end`, an opening never
    closed runs to the end of the text (and is the last block); without it, it is not a block.
    """
    folded = ascii_lower(text)
    open_at = NextFinder(folded, opening.lower())
    close_at = NextFinder(folded, closing.lower())
    pos = 0
    while (start := open_at.find(pos)) >= 0:
        body_start = start + len(opening)
        close = close_at.find(body_start)
        if close < 0:
            if until_end:
                yield Block(start, len(text), body_start, len(text))
            return
        end = close + len(closing)
        yield Block(start, end, body_start, close)
        pos = end


def remove_closed_blocks(text: str, names: Iterable[str]) -> str:
    """`text` without each `<name>...</name>` block (case-insensitive, the first matching close).

    An opening tag whose name is never closed after it stays in the text, as it would with the
    lazy regex `<(a|b)>.*?</\\1>`.
    """
    folded = ascii_lower(text)
    names = [name.lower() for name in names]
    openings = {name: NextFinder(folded, f"<{name}>") for name in names}
    closings = {name: NextFinder(folded, f"</{name}>") for name in names}
    kept: list[str] = []
    pos = copied = 0
    while True:
        found = [(at, name) for name in names if (at := openings[name].find(pos)) >= 0]
        if not found:
            break
        start, name = min(found)
        close = closings[name].find(start + len(name) + 2)
        if close < 0:
            pos = start + 1
            continue
        kept.append(text[copied:start])
        pos = copied = close + len(name) + 3
    kept.append(text[copied:])
    return "".join(kept)


def split_on_any(
    text: str, separators: Iterable[str], *, fold: bool = False, strip: bool = True
) -> list[str]:
    """`text` cut at every separator (the earliest, then the first listed).

    `fold`: separators (lower-case) are matched ignoring ASCII case; `strip`: pieces are
    stripped of whitespace.
    """
    haystack = ascii_lower(text) if fold else text
    finders = [(sep, NextFinder(haystack, sep)) for sep in separators]
    pieces: list[str] = []
    pos = 0
    while True:
        hits = [(at, index) for index, (_, f) in enumerate(finders) if (at := f.find(pos)) >= 0]
        if not hits:
            break
        at, index = min(hits)
        pieces.append(text[pos:at])
        pos = at + len(finders[index][0])
    pieces.append(text[pos:])
    return [piece.strip() for piece in pieces] if strip else pieces
