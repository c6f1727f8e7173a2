"""Hybrid search inside one knowledge base: vector + keyword hits fused by weighted RRF."""

from __future__ import annotations

import uuid

from fastapi import APIRouter

from api.auth import ReaderTenantDep
from api.deps import EmbedderDep, SessionDep, SettingsDep
from graphrag.search.kb_search import search_knowledge_base
from graphrag.search.models import SearchRequest, SearchResponse

router = APIRouter(prefix="/api/v1", tags=["search"])


@router.post("/knowledge-bases/{kb_id}/search")
def search(
    kb_id: uuid.UUID,
    body: SearchRequest,
    session: SessionDep,
    settings: SettingsDep,
    embedder: EmbedderDep,
    tenant: ReaderTenantDep,
) -> SearchResponse:
    """Ranked chunks with each method's score and rank, the match type and stage timings.

    The graph complement is not part of this endpoint yet: `graph_used` is false.
    """
    return search_knowledge_base(session, settings, embedder, tenant, kb_id, body)
