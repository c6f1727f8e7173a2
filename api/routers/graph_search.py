"""Read a knowledge base's graph as JSON: entities, relations and their source chunks."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends

from api.auth import ReaderTenantDep
from api.deps import GraphStoreDep, SessionDep, SettingsDep
from graphrag.graph.search_models import GraphSearchRequest, GraphSearchResponse
from graphrag.graph.view_models import GraphViewResponse
from graphrag.search.graph_search import GraphRead, search_graph
from graphrag.search.graph_view import view_graph

router = APIRouter(prefix="/api/v1/knowledge-bases", tags=["graph search"])


def _error(description: str, code: str) -> dict[str, Any]:
    example = {"error": {"code": code, "message": description, "details": {}}}
    return {"description": description, "content": {"application/json": {"example": example}}}


_EXAMPLES = {
    "by_name": {
        "summary": "Entities whose name contains a text",
        "value": {"entity": "Curie"},
    },
    "filtered": {
        "summary": "Only some relation types, in two documents, at most 10 entities",
        "value": {
            "entity": "Curie",
            "relation_types": ["works_at", "born_in"],
            "knowledge_ids": ["7f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"],
            "limit": 10,
        },
    },
}


_RESPONSES: dict[int | str, dict[str, Any]] = {
    404: _error("knowledge base not found", "not_found"),
    422: _error("the request is not valid", "invalid_input"),
    503: _error(
        "the knowledge graph is not enabled on this server (`graph_disabled`), or this"
        " knowledge base's own graph switch is off (`kb_graph_disabled`)",
        "graph_disabled",
    ),
}


def get_graph_read(
    kb_id: uuid.UUID,
    session: SessionDep,
    settings: SettingsDep,
    graph: GraphStoreDep,
    tenant: ReaderTenantDep,
) -> GraphRead:
    """The base of the path, read for the caller's tenant (`read` needed, whatever the method)."""
    return GraphRead(session, settings, graph, tenant, kb_id)


GraphReadDep = Annotated[GraphRead, Depends(get_graph_read)]
GraphSearchBody = Annotated[GraphSearchRequest, Body(openapi_examples=_EXAMPLES)]


@router.post("/{kb_id}/graph-search", responses=_RESPONSES)
def graph_search(read: GraphReadDep, body: GraphSearchBody) -> GraphSearchResponse:
    """Entities whose name contains `entity` (case-sensitive), with or without relations.

    Read-only and bounded: no model call, no Cypher from the caller. Each entity and relation is
    returned only if at least one of its source chunks still exists, is enabled and belongs to
    the current version of a live document; the `truncated` markers say which caps bit.
    """
    return search_graph(read, body)


@router.post("/{kb_id}/graph-view", responses=_RESPONSES)
def graph_view(read: GraphReadDep, body: GraphSearchBody) -> GraphViewResponse:
    """Graph-search's answer drawn per entity, as the web console shows it.

    The same request, bounds and checks as graph-search; the nodes that the documents of the
    base hold for one entity (one per name and document) come back as one node listing those
    documents, and the relations of one type between the same two entities as one edge with a
    count. With `knowledge_ids`, only those documents' nodes are read.
    """
    return view_graph(read, body)
