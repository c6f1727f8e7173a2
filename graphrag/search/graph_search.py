"""The public graph search: a bounded, read-only view of one knowledge base's graph.

No model is called and no caller text becomes Cypher: the entity substring and the relation
types are query parameters. Every source chunk is checked against PostgreSQL before anything
read from it is returned; an entity or relation left without a valid source is omitted, and a
relation goes with either of its ends.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy.orm import Session

from graphrag.errors import GraphDisabledError, GraphNotEnabledForKbError, InvalidInputError
from graphrag.graph.names import name_key
from graphrag.graph.search_models import (
    EntityPublic,
    GraphEntity,
    GraphLink,
    GraphSearchRequest,
    GraphSearchResponse,
    RelationMatches,
    RelationPublic,
    SourceChunkPublic,
    TruncationPublic,
)
from graphrag.graph.store import GraphStore
from graphrag.kb.service import get_kb_row, kb_graph_on
from graphrag.search.source_check import SourceCheck
from graphrag.settings import GraphSearchSettings, Settings

__all__ = ["GraphAnswer", "GraphRead", "check_request", "read_graph", "search_graph"]


@dataclass(frozen=True)
class GraphRead:
    """What one read of a base's graph runs with, and whose base it reads."""

    session: Session
    settings: Settings
    store: GraphStore
    tenant_id: uuid.UUID
    kb_id: uuid.UUID


@dataclass(frozen=True)
class GraphAnswer:
    """A graph-search answer, and what a view of it needs that the contract does not carry."""

    response: GraphSearchResponse
    keys: dict[str, str]  # entity id -> base entity key of its full (uncut) name
    file_names: dict[str, str]  # knowledge id -> file name, for every entity's document


def check_request(request: GraphSearchRequest, limits: GraphSearchSettings) -> int:
    """The entity limit to use; `InvalidInputError` when the request exceeds a cap."""
    problems: list[str] = []
    if not request.entity.strip():
        problems.append("entity must not be blank")
    if len(request.entity) > limits.max_entity_chars:
        problems.append(f"entity of at most {limits.max_entity_chars} characters")
    if request.limit is not None and request.limit > limits.max_limit:
        problems.append(f"limit of at most {limits.max_limit}")
    types = request.relation_types or []
    if len(types) > limits.max_relation_types:
        problems.append(f"at most {limits.max_relation_types} relation types")
    if any(not t.strip() or len(t) > limits.max_entity_chars for t in types):
        problems.append(f"relation types of 1 to {limits.max_entity_chars} characters")
    if len(request.knowledge_ids or []) > limits.max_knowledge_ids:
        problems.append(f"at most {limits.max_knowledge_ids} knowledge ids")
    if problems:
        raise InvalidInputError("graph search request exceeds its limits: " + "; ".join(problems))
    return request.limit or limits.default_limit


def _cut(text: str, max_chars: int) -> tuple[str, bool]:
    return (text[:max_chars], True) if len(text) > max_chars else (text, False)


def _entity_public(
    entity: GraphEntity, sources: SourceCheck, limits: GraphSearchSettings, *, matched: bool
) -> EntityPublic:
    name, name_cut = _cut(entity.name, limits.max_name_chars)
    attributes = [_cut(a, limits.max_attribute_chars) for a in entity.attributes]
    chunks = sources.valid_ids(entity.chunks)
    return EntityPublic(
        id=entity.id,
        name=name,
        knowledge_id=entity.kg,
        attributes=[text for text, _ in attributes[: limits.max_attributes]],
        chunks=chunks[: limits.max_chunks_per_item],
        matched=matched,
        resolved_id=entity.resolved_id,
        name_truncated=name_cut,
        attributes_truncated=len(attributes) > limits.max_attributes
        or any(cut for _, cut in attributes[: limits.max_attributes]),
        chunks_truncated=len(chunks) > limits.max_chunks_per_item,
    )


def _relation_public(
    link: GraphLink, sources: SourceCheck, limits: GraphSearchSettings
) -> RelationPublic:
    type_, type_cut = _cut(link.type, limits.max_name_chars)
    chunks = sources.valid_ids(link.chunks)
    return RelationPublic(
        id=link.id,
        source=link.source,
        target=link.target,
        type=type_,
        chunks=chunks[: limits.max_chunks_per_item],
        type_truncated=type_cut,
        chunks_truncated=len(chunks) > limits.max_chunks_per_item,
    )


def _listed_sources(
    entities: list[EntityPublic], relations: list[RelationPublic], sources: SourceCheck
) -> list[SourceChunkPublic]:
    """The chunks the answer names, in the order they are first named."""
    ids = [c for e in entities for c in e.chunks] + [c for r in relations for c in r.chunks]
    return [sources.valid[c] for c in dict.fromkeys(ids)]


def _any_field_cut(
    entities: list[EntityPublic], relations: list[RelationPublic], listed: list[SourceChunkPublic]
) -> bool:
    return (
        any(e.name_truncated or e.attributes_truncated or e.chunks_truncated for e in entities)
        or any(r.type_truncated or r.chunks_truncated for r in relations)
        or any(s.excerpt_truncated for s in listed)
    )


def _ensure_graph_on(read: GraphRead) -> uuid.UUID:
    """The base's id once the global switch, the base and its own graph switch are all on."""
    if not read.store.enabled:
        raise GraphDisabledError("the knowledge graph is not enabled on this server")
    kb = get_kb_row(read.session, read.tenant_id, read.kb_id)
    if not kb_graph_on(read.settings, kb):
        raise GraphNotEnabledForKbError(
            "this knowledge base does not build a knowledge graph", kb_id=str(read.kb_id)
        )
    return kb.id


def _standing_links(
    related: RelationMatches, sources: SourceCheck, result_ids: set[str]
) -> tuple[list[GraphLink], list[GraphEntity]]:
    """Relations with a valid source and two valid ends; the ends that are not results."""
    sources.check(
        [c for r in related.relations for c in r.chunks]
        + [c for e in related.endpoints for c in e.chunks]
    )
    ends = {e.id: e for e in related.endpoints if sources.valid_ids(e.chunks)}
    links = [
        r
        for r in related.relations
        if sources.valid_ids(r.chunks) and r.source in ends and r.target in ends
    ]
    neighbour_ids = dict.fromkeys(x for r in links for x in (r.source, r.target))
    return links, [ends[i] for i in neighbour_ids if i not in result_ids]


def search_graph(read: GraphRead, request: GraphSearchRequest) -> GraphSearchResponse:
    """Entities whose name contains `request.entity`, their relations and valid source chunks.

    Raises `GraphDisabledError` (graph off on the server), `NotFoundError` (no such base for the
    tenant), `GraphNotEnabledForKbError` (graph off for the base), `InvalidInputError`.
    """
    return read_graph(read, request).response


def read_graph(read: GraphRead, request: GraphSearchRequest) -> GraphAnswer:
    """`search_graph`'s answer with each entity's base entity key and its document's file name
    (same errors)."""
    limits = read.settings.graph_search
    limit = check_request(request, limits)
    kb_id = _ensure_graph_on(read)
    sources = SourceCheck(read.session, kb_id, limits.excerpt_chars)

    matches = read.store.match_entities(
        kb_id, request.entity, request.knowledge_ids, limits.candidate_cap, limits.match_timeout_s
    )
    sources.check(c for e in matches.entities for c in e.chunks)
    found = [e for e in matches.entities if sources.valid_ids(e.chunks)]
    results = found[:limit]
    related = read.store.entity_relations(
        kb_id, [e.id for e in results], request.relation_types, limits.max_relations
    )
    links, neighbours = _standing_links(related, sources, {e.id for e in results})

    entities = [_entity_public(e, sources, limits, matched=True) for e in results] + [
        _entity_public(e, sources, limits, matched=False) for e in neighbours
    ]
    relations = [_relation_public(r, sources, limits) for r in links]
    listed = _listed_sources(entities, relations, sources)
    shown = listed[: limits.max_sources]
    response = GraphSearchResponse(
        entities=entities,
        relations=relations,
        sources=shown,
        truncated=TruncationPublic(
            results=len(found) > limit,
            candidates=matches.truncated,
            relations=related.truncated,
            sources=len(listed) > limits.max_sources,
            fields=_any_field_cut(entities, relations, shown),
        ),
    )
    return GraphAnswer(
        response=response,
        keys={e.id: name_key(e.name) for e in results + neighbours},
        file_names=sources.file_names,
    )
