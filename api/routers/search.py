"""Search inside one knowledge base: vector, keyword and graph lists fused by weighted RRF."""

from __future__ import annotations

import uuid

from fastapi import APIRouter

from api.auth import ReaderTenantDep
from api.deps import EmbedderDep, GraphStoreDep, SessionDep, SettingsDep
from graphrag.search.kb_search import search_knowledge_base
from graphrag.search.models import SearchRequest, SearchResponse
from graphrag.search.retrieval import GraphSource

router = APIRouter(prefix="/api/v1", tags=["search"])


@router.post("/knowledge-bases/{kb_id}/search")
def search(
    kb_id: uuid.UUID,
    body: SearchRequest,
    session: SessionDep,
    settings: SettingsDep,
    embedder: EmbedderDep,
    tenant: ReaderTenantDep,
    graph: GraphStoreDep,
) -> SearchResponse:
    """Ranked chunks with each method's score and rank, the match type and stage timings.

    With `use_graph` and the base's graph on, chunks ranked through the knowledge graph are fused
    in; each such hit says which question entities and which path led to it.
    """
    source = GraphSource(store=graph)
    return search_knowledge_base(session, settings, embedder, tenant, kb_id, body, source)
