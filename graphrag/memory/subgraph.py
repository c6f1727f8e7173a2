"""A memory search that walks: the owner's entities found by words of their name or
description (full-text) and through the facts nearest the query (vector), the entities within
a bounded number of RELATES hops of them, the relations between those, and the facts naming
them. Read-only: nothing is touched."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphrag.memory import cypher
from graphrag.memory.archive import owner_params
from graphrag.memory.context import MemoryContext
from graphrag.memory.records import MemoryFact, MemoryOwner
from graphrag.value_model import ValueModel

__all__ = ["MemorySubgraph", "SubgraphEntity", "SubgraphRelation", "search_subgraph"]

# Characters with a meaning in the full-text (Lucene) query syntax, escaped in user words.
_LUCENE_SPECIAL = frozenset('+-&|!(){}[]^"~*?:\\/')


class SubgraphEntity(ValueModel):
    """An entity of the subgraph; `matched`: found by the search itself, not by the walk."""

    name: str
    description: str
    matched: bool


class SubgraphRelation(ValueModel):
    source: str
    target: str
    type: str
    weight: int


class MemorySubgraph(ValueModel):
    """What a memory search found: entities, the relations between them, the facts naming them."""

    query: str
    hops: int
    entities: list[SubgraphEntity]
    relations: list[SubgraphRelation]
    facts: list[MemoryFact]


def fulltext_query(text: str) -> str:
    """The words of `text` as a full-text query matching any of them, special characters
    escaped and lower-cased (so AND/OR/NOT stay words, never operators)."""
    words = ["".join("\\" + c if c in _LUCENE_SPECIAL else c for c in w) for w in text.split()]
    return " ".join(w.lower() for w in words)


def _text_keys(ctx: MemoryContext, owner: MemoryOwner, query: str) -> list[str]:
    terms = fulltext_query(query)
    if not terms:
        return []
    rows = ctx.graph_io().read(
        cypher.ENTITIES_BY_TEXT,
        {
            **owner_params(owner),
            "index": cypher.ENTITY_TEXT_INDEX_NAME,
            "query": terms,
            "pool": ctx.settings.rank_candidates,
            "limit": ctx.settings.subgraph_entity_k,
        },
    )
    return [str(r["key"]) for r in rows]


def _vector_keys(ctx: MemoryContext, owner: MemoryOwner, vector: Sequence[float]) -> list[str]:
    near = ctx.archive.nearest(owner, vector, ctx.settings.rank_candidates)
    ids = [str(hit.fact.id) for hit in near if hit.similarity >= ctx.settings.min_similarity]
    if not ids:
        return []
    rows = ctx.graph_io().read(cypher.ENTITIES_OF_FACTS, {**owner_params(owner), "ids": ids})
    by_fact = {str(r["id"]): [str(k) for k in r["keys"]] for r in rows}
    return [key for fact_id in ids for key in sorted(by_fact.get(fact_id, []))]


def _first_unique(keys: list[str], limit: int) -> list[str]:
    return list(dict.fromkeys(keys))[:limit]


def search_subgraph(
    ctx: MemoryContext,
    owner: MemoryOwner,
    query: str,
    hops: int | None = None,
    vector: Sequence[float] | None = None,
) -> MemorySubgraph:
    """Search the owner's memory graph for `query` and walk `hops` RELATES hops from the hits
    (at most `subgraph_max_hops`, the default); bounded by the `subgraph_*` settings.
    `vector`: the query's embedding when the caller has it already."""
    if vector is None:
        vector = ctx.embedder.embed_query(query)
    settings = ctx.settings
    depth = min(
        hops if hops is not None else settings.subgraph_max_hops, settings.subgraph_max_hops
    )
    matched = _first_unique(
        _text_keys(ctx, owner, query) + _vector_keys(ctx, owner, vector),
        settings.subgraph_entity_k,
    )
    matched = matched[: settings.subgraph_max_nodes]
    if not matched:
        return MemorySubgraph(query=query, hops=depth, entities=[], relations=[], facts=[])
    params: dict[str, Any] = owner_params(owner)
    reached = _walk(ctx, params, matched, depth)
    io = ctx.graph_io()
    nodes = {
        str(r["key"]): r for r in io.read(cypher.SUBGRAPH_ENTITIES, {**params, "keys": reached})
    }
    relations = io.read(
        cypher.SUBGRAPH_RELATIONS,
        {**params, "keys": reached, "limit": settings.neighbourhood_max_relations},
    )
    facts = io.read(
        cypher.SUBGRAPH_FACTS, {**params, "keys": reached, "limit": settings.subgraph_max_facts}
    )
    return MemorySubgraph(
        query=query,
        hops=depth,
        entities=[
            SubgraphEntity(
                name=nodes[key]["name"],
                description=nodes[key]["description"] or "",
                matched=key in matched,
            )
            for key in reached
            if key in nodes
        ],
        relations=[SubgraphRelation.model_validate(r) for r in relations],
        facts=[MemoryFact.model_validate(r["fact"]) for r in facts],
    )


def _walk(ctx: MemoryContext, params: dict[str, Any], start: list[str], hops: int) -> list[str]:
    """Keys of `start` and of the entities within `hops` hops, nearest first, at most
    `subgraph_max_nodes` in all: one query per hop, each told how many nodes are left."""
    reached = list(start)
    frontier = list(start)
    for _ in range(hops):
        room = ctx.settings.subgraph_max_nodes - len(reached)
        if room <= 0 or not frontier:
            break
        rows = ctx.graph_io().read(
            cypher.NEXT_HOP, {**params, "keys": frontier, "seen": reached, "limit": room}
        )
        frontier = [str(r["key"]) for r in rows]
        reached.extend(frontier)
    return reached
