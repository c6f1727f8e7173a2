"""The resolved entities a resolution pass made, found again by name without a scan of them all.

The base's candidates of an entity come from Neo4j's indexes. What the current document, or the
run's earlier documents, made is not written yet, so it is kept here and looked up by keys of
the names, each key holding only its latest few: a document of thousands of entities costs
linear time, where weighing each entity against all those made before it cost minutes.
"""

from __future__ import annotations

from collections.abc import Container, Iterable

from graphrag.graph.names import name_tokens
from graphrag.graph.resolution.models import Candidate
from graphrag.graph.resolution.name_match import longest_word, meeting_keys
from graphrag.settings import ResolutionSettings

__all__ = ["MadeInDocument", "MadeInRun"]


class _Latest:
    """Ids filed under keys: the latest `limit` of each key, oldest first (filing an id again
    makes it the latest)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._ids: dict[str, dict[str, None]] = {}

    def file(self, key: str, rid: str) -> None:
        if not self._limit:
            return
        ids = self._ids.setdefault(key, {})
        ids.pop(rid, None)
        ids[rid] = None
        if len(ids) > self._limit:
            del ids[next(iter(ids))]

    def get(self, key: str) -> Iterable[str]:
        return self._ids.get(key, {})


def _member_names(candidate: Candidate) -> list[str]:
    return [name for _, name in candidate.members] or [candidate.name]


class MadeInRun:
    """The resolved entities a run's documents made (with the members they gained), found as the
    base's candidates would find them once written: by the keys of their members, and by the
    longest word of those keys (the most recent `word_candidates` holding it)."""

    def __init__(self, settings: ResolutionSettings) -> None:
        self.entities: dict[str, Candidate] = {}
        self._titles = frozenset(settings.titles)
        self._by_key: dict[str, dict[str, None]] = {}
        self._by_word = _Latest(settings.word_candidates)

    def keep(self, candidate: Candidate) -> None:
        """Add or update one, found by its members' keys and their longest words."""
        rid = candidate.resolved_id
        self.entities[rid] = candidate
        for name in _member_names(candidate):
            tokens = name_tokens(name)
            self._by_key.setdefault(" ".join(tokens), {})[rid] = None
            word = longest_word(tokens, self._titles)
            if word:
                self._by_word.file(word, rid)

    def found(self, key: str, skip: Container[str]) -> list[Candidate]:
        """Those of the same key, then the latest holding the key's longest word, except the
        ids in `skip`."""
        ids = dict(self._by_key.get(key, {}))
        word = longest_word(key.split(), self._titles)
        if word:
            ids.update(dict.fromkeys(self._by_word.get(word)))
        return [self.entities[rid] for rid in ids if rid not in skip]


class MadeInDocument:
    """The resolved entities one document's pass made, found by the keys their members' names
    share with an entity's (`meeting_keys`), the latest `document_candidates` of each key, in
    the order they were made."""

    def __init__(self, settings: ResolutionSettings) -> None:
        self.entities: dict[str, Candidate] = {}
        self._order: dict[str, int] = {}
        self._settings = settings
        # Sets once, not the settings' lists: every name's words are looked up in them.
        self._titles = frozenset(settings.titles)
        self._skip = frozenset(settings.acronym_skip_words)
        self._by_key = _Latest(settings.document_candidates)

    def _keys(self, tokens: list[str]) -> set[str]:
        s = self._settings
        return meeting_keys(
            tokens,
            titles=self._titles,
            skip_words=self._skip,
            typo_min_chars=s.typo_min_chars,
            typo_max_chars=s.typo_max_chars,
            ends=s.typo_lookup_chars,
        )

    def add(self, candidate: Candidate) -> None:
        """A new one, filed under the keys of its members' names."""
        rid = candidate.resolved_id
        self._order[rid] = len(self._order)
        self.entities[rid] = candidate
        for name in _member_names(candidate):
            for key in self._keys(name_tokens(name)):
                self._by_key.file(key, rid)

    def join(self, candidate: Candidate, name: str) -> None:
        """One of them with the member `name` added, filed under that name's keys too."""
        rid = candidate.resolved_id
        self.entities[rid] = candidate
        for key in self._keys(name_tokens(name)):
            self._by_key.file(key, rid)

    def found(self, key: str) -> list[Candidate]:
        """Those filed under a key of the entity key `key`."""
        ids = {rid for k in self._keys(key.split()) for rid in self._by_key.get(k)}
        return [self.entities[rid] for rid in sorted(ids, key=self._order.__getitem__)]
