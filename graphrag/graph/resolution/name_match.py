"""How two entity names relate: the same, an abbreviation, an acronym, a typo, a part, or not.

Names are compared as their keys' words (`graph.names.name_tokens`) with titles ("Dr", "Prof")
dropped. Everything here is plain loops over short word lists: no regular expression.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "NameLink",
    "NameRelation",
    "compare_names",
    "edit_similarity",
    "longest_word",
    "meeting_keys",
    "other_given_names",
    "strip_titles",
    "written_alike",
]


class NameRelation(StrEnum):
    """What one name is to another, strongest first."""

    SAME = "same_name"  # the same words once titles are dropped ("Dr Ada Moreau", "Ada Moreau")
    INITIALS = "initials"  # given names cut to initials ("A. Moreau", "Ada Moreau")
    ACRONYM = "acronym"  # one word of the other's initials ("WHO", "World Health Organization")
    TYPO = "typo"  # a few letters apart in long words ("Ada Moreua", "Ada Moreau")
    PART = "part"  # one name's words are some of the other's ("Moreau", "Ada Moreau")
    NONE = "none"


@dataclass(frozen=True)
class NameLink:
    """The relation found between two names and how close they are (1.0 for the same words)."""

    relation: NameRelation
    similarity: float


def strip_titles(tokens: Sequence[str], titles: Collection[str]) -> list[str]:
    """The words without leading titles; a name that is only titles keeps its words."""
    start = 0
    while start < len(tokens) and tokens[start] in titles:
        start += 1
    return list(tokens[start:]) if start < len(tokens) else list(tokens)


def longest_word(tokens: Sequence[str], titles: Collection[str]) -> str:
    """The word a name is looked up by: its longest, titles aside ("" for no word)."""
    words = strip_titles(tokens, titles)
    return max(words, key=len) if words else ""


def meeting_keys(
    tokens: Sequence[str],
    *,
    titles: Collection[str],
    skip_words: Collection[str],
    typo_min_chars: int,
    typo_max_chars: int,
    ends: int,
) -> set[str]:
    """Keys that two names share whenever `compare_names` may find a relation between them, so a
    name is weighed against those filed under its keys instead of against every other: the
    words once titles are dropped, each word of two letters or more that is not a linking word
    (initials and parts share their last word, typos of several words one word), the initials
    of a name of several words (its acronym), and the first and last `ends` letters of a name a
    typo may be of (a typo of one edit keeps one end). A typo at both ends is missed."""
    words = strip_titles(tokens, titles)
    if not words:
        return set()
    joined = " ".join(words)
    keys = {"name:" + joined}
    keys.update("word:" + w for w in words if len(w) > 1 and w not in skip_words)
    letters = [w[0] for w in words if w not in skip_words]
    if len(letters) >= 2:
        keys.add("word:" + "".join(letters))
    if typo_min_chars <= len(joined) <= typo_max_chars:
        keys.update(("start:" + joined[:ends], "end:" + joined[-ends:]))
    return keys


def edit_similarity(a: str, b: str) -> float:
    """1 - edit distance / the longer length, where a swap of two neighbouring letters is one
    edit like an insertion, a deletion or a change (1.0 for equal strings)."""
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, before[j - 2] + 1)
            current.append(cost)
        before, previous = previous, current
    return 1.0 - previous[-1] / max(len(a), len(b))


def _initials_match(short: Sequence[str], long: Sequence[str]) -> bool:
    """Same number of words, the last equal, each other word equal or the other's initial."""
    if len(short) != len(long) or len(short) < 2 or short[-1] != long[-1]:
        return False
    cut = False
    for s, w in zip(short[:-1], long[:-1], strict=True):
        if s == w:
            continue
        if len(s) == 1 and w.startswith(s):
            cut = True
            continue
        return False
    return cut


def _acronym_of(word: str, words: Sequence[str], skip: Collection[str]) -> bool:
    letters = [w[0] for w in words if w not in skip]
    return len(letters) >= 2 and word == "".join(letters)


def other_given_names(a: Sequence[str], b: Sequence[str], titles: Collection[str]) -> bool:
    """Two names of as many words and the same last one whose other words differ, neither cut to
    the other's initials: one family name, two people ("Marie Curie", "Pierre Curie"; or two
    firms, "Orla Labs" and "Nexa Labs"); not "M. Curie" and "Marie Curie". A typo between them
    is for `compare_names` to find first."""
    a, b = strip_titles(a, titles), strip_titles(b, titles)
    return (
        len(a) == len(b) >= 2
        and a[-1] == b[-1]
        and a != b
        and not (_initials_match(a, b) or _initials_match(b, a))
    )


def _is_part(short: Sequence[str], long: Sequence[str], skip: Collection[str]) -> bool:
    """Every word of the shorter name is in the longer, and the longer's last word among them
    (a surname or the head noun), so "Moreau" is part of "Ada Moreau" but "Ada" is not; a
    longer name with a linking word names something else ("University of California")."""
    return (
        len(short) < len(long)
        and set(short) <= set(long)
        and long[-1] in short
        and not any(word in skip for word in long)
    )


def _abbreviates(short: str, long: str) -> bool:
    """`short` is `long` cut down, its letters kept in order from the first ("labs" of
    "laboratories", "corp" of "corporation", "intl" of "international")."""
    if len(short) >= len(long) or not short or short[0] != long[0]:
        return False
    letters = iter(long)
    return all(letter in letters for letter in short)


def written_alike(a: Sequence[str], b: Sequence[str]) -> bool:
    """Two different names that may be one name written two ways: as many words, one at least
    the same, each other word an abbreviation of its counterpart ("orla labs" and "orla
    laboratories"; not "boston symphony" and "boston university")."""
    if a == b or len(a) != len(b):
        return False
    same = False
    for x, y in zip(a, b, strict=True):
        if x == y:
            same = True
        elif not (_abbreviates(x, y) or _abbreviates(y, x)):
            return False
    return same


def compare_names(
    a: Sequence[str],
    b: Sequence[str],
    *,
    titles: Collection[str],
    skip_words: Collection[str],
    typo_min_similarity: float,
    typo_min_chars: int,
    typo_max_chars: int,
) -> NameLink:
    """The strongest relation between two names given as key words (see `NameRelation`)."""
    a, b = strip_titles(a, titles), strip_titles(b, titles)
    if not a or not b:
        return NameLink(NameRelation.NONE, 0.0)
    if a == b:
        return NameLink(NameRelation.SAME, 1.0)
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    if _initials_match(short, long) or _initials_match(long, short):
        return NameLink(NameRelation.INITIALS, 0.9)
    if len(short) == 1 and _acronym_of(short[0], long, skip_words):
        return NameLink(NameRelation.ACRONYM, 0.9)
    joined_a, joined_b = " ".join(a), " ".join(b)
    shorter, longer = sorted((len(joined_a), len(joined_b)))
    # The distance is at least the length difference: a pair too far apart by length alone, or
    # too long to compare cheaply, is not a typo.
    # The words that differ must be long: "Chiang Rai" and "Chiang Mai" are two cities.
    differing = [x for pair in zip(a, b, strict=False) if pair[0] != pair[1] for x in pair]
    if (
        len(a) == len(b)
        and min(len(word) for word in differing) >= typo_min_chars
        and longer <= typo_max_chars
        and 1.0 - (longer - shorter) / longer >= typo_min_similarity
    ):
        similarity = edit_similarity(joined_a, joined_b)
        if similarity >= typo_min_similarity:
            return NameLink(NameRelation.TYPO, similarity)
    if _is_part(short, long, skip_words):
        return NameLink(NameRelation.PART, len(short) / len(long))
    return NameLink(NameRelation.NONE, 0.0)
