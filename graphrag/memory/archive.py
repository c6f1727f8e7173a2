"""Archival facts as `:Memory` nodes: nearest-neighbour reads, access updates, CRUD.

Reads never change a fact; only `touch` (called by recall) moves `last_access` and
`access_count`. The dedup probe is a plain `nearest` call, hence read-only.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from graphrag.graph.vector_checks import VectorUse, searchable, skip_unsearchable
from graphrag.memory import cypher
from graphrag.memory.graph_io import MemoryGraphIO, Statement
from graphrag.memory.records import MemoryFact, MemoryOwner, NewFact, SimilarFact
from graphrag.settings import MemorySettings

__all__ = ["MemoryArchive", "cosine_from_score", "owner_params"]


def cosine_from_score(score: float) -> float:
    """Neo4j's cosine score is (1 + cosine) / 2; the memory's thresholds are on the cosine."""
    return 2.0 * float(score) - 1.0


def owner_params(owner: MemoryOwner) -> dict[str, Any]:
    """The scoping parameters every memory query takes."""
    return {"tenant": str(owner.tenant_id), "owner": owner.owner}


def _fact_params(fact_id: uuid.UUID, fact: NewFact, embedding: Sequence[float]) -> dict[str, Any]:
    """A fact's own properties as the write queries take them. A vector without a positive
    finite norm is left out (counted): the fact is kept, found through its entities and lists,
    never by similarity."""
    usable = searchable(embedding)
    if not usable:
        skip_unsearchable(VectorUse.MEMORY_FACT, 1)
    return {
        "id": str(fact_id),
        "text": fact.text,
        "embedding": list(embedding) if usable else None,
        "importance": fact.importance,
        "kind": fact.kind.value,
        "session_id": str(fact.session_id) if fact.session_id else None,
    }


def _fact(raw: dict[str, Any]) -> MemoryFact:
    return MemoryFact.model_validate(raw)


def _similar(rows: Sequence[dict[str, Any]]) -> list[SimilarFact]:
    return [
        SimilarFact(fact=_fact(row["fact"]), similarity=cosine_from_score(row["score"]))
        for row in rows
    ]


class MemoryArchive:
    """The archival facts of every owner, always read and written for one owner at a time."""

    def __init__(self, io: MemoryGraphIO, settings: MemorySettings) -> None:
        self.io = io
        self.settings = settings

    def nearest(self, owner: MemoryOwner, vector: Sequence[float], limit: int) -> list[SimilarFact]:
        """Up to `limit` facts of `owner` most similar to `vector`, best first. Read-only.

        The vector index is shared by all owners: when the owner's hits in its pool are fewer
        than asked and the pool was full (other owners crowded it), an exact scan of the
        owner's facts answers instead.
        """
        if limit <= 0:
            return []
        if not searchable(vector):
            skip_unsearchable(VectorUse.MEMORY_QUERY, 1)  # the index would refuse it
            return []
        params = {**owner_params(owner), "vector": list(vector)}
        pool = max(self.settings.vector_candidates, limit)
        row = self.io.read(
            cypher.NEAREST_BY_INDEX, {**params, "index": cypher.VECTOR_INDEX_NAME, "pool": pool}
        )[0]
        hits = _similar(row["hits"])
        if len(hits) < limit and int(row["pool_size"]) >= pool:
            hits = _similar(self.io.read(cypher.NEAREST_BY_SCAN, {**params, "limit": limit}))
        hits.sort(key=lambda h: (-h.similarity, -h.fact.created_at))
        return hits[:limit]

    def touch(self, owner: MemoryOwner, ids: Sequence[uuid.UUID], now_ms: int) -> int:
        """Record one access of each fact `ids` at `now_ms`; returns how many were found."""
        if not ids:
            return 0
        rows = self.io.write(
            cypher.TOUCH_FACTS,
            {**owner_params(owner), "ids": [str(i) for i in ids], "now": now_ms},
        )
        return int(rows[0]["touched"]) if rows else 0

    def list_facts(
        self, owner: MemoryOwner, *, skip: int, limit: int
    ) -> tuple[list[MemoryFact], int]:
        """A page of the owner's facts, newest first, and the owner's total."""
        params = owner_params(owner)
        rows = self.io.read(cypher.LIST_FACTS, {**params, "skip": skip, "limit": limit})
        total = self.io.read(cypher.COUNT_FACTS, params)[0]["total"]
        return [_fact(r["fact"]) for r in rows], int(total)

    def get(self, owner: MemoryOwner, fact_id: uuid.UUID) -> MemoryFact | None:
        """One fact of the owner, or None."""
        rows = self.io.read(cypher.GET_FACT, {**owner_params(owner), "id": str(fact_id)})
        return _fact(rows[0]["fact"]) if rows else None

    def delete(self, owner: MemoryOwner, fact_id: uuid.UUID) -> bool:
        """Remove one fact and its MENTIONS edges; False when the owner has no such fact."""
        rows = self.io.write(cypher.DELETE_FACT, {**owner_params(owner), "id": str(fact_id)})
        return bool(rows and rows[0]["deleted"])

    def delete_session_facts(self, tenant_id: uuid.UUID, session_id: uuid.UUID) -> int:
        """Remove everything learnt from one chat session (any owner of the tenant), in one
        transaction: its facts, its increments of relation weights and its parts of entity
        descriptions; edges and entities left with nothing go. Returns the facts removed."""
        params = {"tenant": str(tenant_id), "session_id": str(session_id)}
        rows = self.io.write_all(
            [
                (cypher.DELETE_SESSION_FACTS, params),
                (cypher.FORGET_SESSION_RELATIONS, params),
                (cypher.FORGET_SESSION_ENTITIES, params),
            ]
        )[0]
        return int(rows[0]["deleted"]) if rows else 0

    def upsert(
        self,
        owner: MemoryOwner,
        fact_id: uuid.UUID,
        fact: NewFact,
        embedding: Sequence[float],
        now_ms: int,
    ) -> bool:
        """Write the fact `fact_id` (created, or its text replaced); True when created."""
        rows = self.io.write(
            cypher.UPSERT_FACT,
            {**owner_params(owner), **_fact_params(fact_id, fact, embedding), "now": now_ms},
        )
        return bool(rows[0]["created"])

    @staticmethod
    def create_statement(
        owner: MemoryOwner,
        facts: Sequence[tuple[uuid.UUID, NewFact, Sequence[float]]],
        now_ms: int,
    ) -> Statement:
        """The batched creation of `(id, fact, embedding)` triples, for a larger transaction."""
        rows = [_fact_params(fact_id, fact, embedding) for fact_id, fact, embedding in facts]
        return cypher.CREATE_FACTS, {**owner_params(owner), "rows": rows, "now": now_ms}
