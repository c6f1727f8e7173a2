"""The memory's entity graph: `:MemoryEntity` nodes of an owner, their RELATES edges (weighted
by occurrences), the MENTIONS edges from facts and SAME_AS links to knowledge-base entities."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence

from graphrag.graph.vector_checks import VectorUse, searchable, skip_unsearchable
from graphrag.memory import cypher
from graphrag.memory.archive import cosine_from_score, owner_params
from graphrag.memory.graph_io import MemoryGraphIO, Statement
from graphrag.memory.mentions import entity_key, names_in_text
from graphrag.memory.records import (
    EntityNeighbourhood,
    EntityRelation,
    LinkedKbEntity,
    MemoryFact,
    MemoryOwner,
    SessionEntity,
    SessionRelation,
    SimilarFact,
)
from graphrag.settings import MemorySettings

__all__ = ["MemoryEntityGraph"]


class MemoryEntityGraph:
    """Reads of an owner's entity graph, and the statements that write it (batched, UNWIND)."""

    def __init__(self, io: MemoryGraphIO, settings: MemorySettings) -> None:
        self.io = io
        self.settings = settings

    def known_names_in(self, owner: MemoryOwner, text: str, *, capped: bool = True) -> list[str]:
        """Names of the owner's entities that occur in `text` as whole words, longest first.

        Neo4j keeps the entities whose key is a substring of the text; the word-boundary check
        then drops partial hits ("ai" inside "said"). `capped`: at most `max_message_entities`.
        """
        rows = self.io.read(
            cypher.ENTITY_IN_TEXT, {**owner_params(owner), "text": entity_key(text)}
        )
        found = names_in_text((str(r["name"]) for r in rows), text)
        return found[: self.settings.max_message_entities] if capped else found

    def facts_about(
        self, owner: MemoryOwner, names: Sequence[str], vector: Sequence[float], limit: int
    ) -> list[SimilarFact]:
        """Facts that mention the entities `names` or their neighbours, nearest to `vector`."""
        keys = sorted({entity_key(n) for n in names})
        if not keys or limit <= 0:
            return []
        if not searchable(vector):  # no similarity to order by
            skip_unsearchable(VectorUse.MEMORY_QUERY, 1)
            return []
        rows = self.io.read(
            cypher.ENTITY_FACTS,
            {**owner_params(owner), "keys": keys, "vector": list(vector), "limit": limit},
        )
        return [
            SimilarFact(
                fact=MemoryFact.model_validate(r["fact"]),
                similarity=cosine_from_score(r["score"]),
            )
            for r in rows
        ]

    def neighbourhood(self, owner: MemoryOwner, name: str) -> EntityNeighbourhood | None:
        """The entity called `name` (any case), its relations, facts and KB twins; else None."""
        params = {**owner_params(owner), "key": entity_key(name)}
        head = self.io.read(cypher.NEIGHBOURHOOD_ENTITY, params)
        if not head:
            return None
        relations = self.io.read(
            cypher.NEIGHBOURHOOD_RELATIONS,
            {**params, "limit": self.settings.neighbourhood_max_relations},
        )
        facts = self.io.read(
            cypher.NEIGHBOURHOOD_FACTS, {**params, "limit": self.settings.neighbourhood_max_facts}
        )
        return EntityNeighbourhood(
            name=head[0]["name"],
            description=head[0]["description"] or "",
            relations=[
                EntityRelation(
                    type=r["type"],
                    weight=int(r["weight"]),
                    other=r["other"],
                    direction="out" if r["outgoing"] else "in",
                )
                for r in relations
            ],
            facts=[MemoryFact.model_validate(r["fact"]) for r in facts],
            same_as=[LinkedKbEntity.model_validate(x) for x in head[0]["same_as"]],
        )

    @staticmethod
    def merge_entities(
        owner: MemoryOwner,
        session_id: uuid.UUID,
        entities: Sequence[SessionEntity],
        now_ms: int,
    ) -> Statement:
        """Upsert entities by key, recording the session's description part apart; the
        entity's description is the longest part."""
        # One row per key (first spelling, longest description), for the same reason as the
        # relations' counts below.
        by_key: dict[str, dict[str, str]] = {}
        for e in entities:
            row = by_key.setdefault(
                entity_key(e.name), {"key": entity_key(e.name), "name": e.name, "description": ""}
            )
            if len(e.description) > len(row["description"]):
                row["description"] = e.description
        rows = list(by_key.values())
        return cypher.MERGE_ENTITIES, {
            **owner_params(owner),
            "session_id": str(session_id),
            "rows": rows,
            "now": now_ms,
        }

    @staticmethod
    def merge_relations(
        owner: MemoryOwner,
        session_id: uuid.UUID,
        relations: Sequence[SessionRelation],
        now_ms: int,
    ) -> Statement:
        """Upsert RELATES edges between existing entities; each occurrence adds one to the
        weight and to the session's recorded increment."""
        # One row per edge with its count: rows of one UNWIND may all read an edge before
        # any of them writes it, so repeated rows would not add up.
        counts = Counter((entity_key(r.source), entity_key(r.target), r.type) for r in relations)
        rows = [
            {"source": source, "target": target, "type": kind, "count": count}
            for (source, target, kind), count in sorted(counts.items())
        ]
        return cypher.MERGE_RELATES, {
            **owner_params(owner),
            "session_id": str(session_id),
            "rows": rows,
            "now": now_ms,
        }

    @staticmethod
    def link_mentions(
        owner: MemoryOwner, links: Sequence[tuple[uuid.UUID, Sequence[str]]]
    ) -> Statement:
        """MENTIONS edges from each fact id to the entities named (by name) in it."""
        rows = [
            {"id": str(fact_id), "keys": sorted({entity_key(n) for n in names})}
            for fact_id, names in links
            if names
        ]
        return cypher.LINK_MENTIONS, {**owner_params(owner), "rows": rows}

    @staticmethod
    def link_same_as(
        owner: MemoryOwner, names: Sequence[str], kb_labels: Sequence[str]
    ) -> Statement:
        """SAME_AS edges to entities of the same name under the knowledge-base labels given."""
        keys = sorted({entity_key(n) for n in names})
        return cypher.LINK_SAME_AS, {
            **owner_params(owner),
            "keys": keys,
            "kb_labels": list(kb_labels),
        }
