"""Search inside knowledge bases: resolve the bases and the request's defaults, then retrieve."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from graphrag.db.enums import KnowledgeBaseStatus
from graphrag.db.models import KnowledgeBase
from graphrag.errors import InvalidInputError, NotFoundError
from graphrag.kb.schemas import IndexingStrategy
from graphrag.kb.service import get_kb_row, kb_graph_on
from graphrag.search.embeddings import Embedder
from graphrag.search.models import KbScope, RetrievalRequest, SearchRequest, SearchResponse
from graphrag.search.retrieval import GraphSource, retrieve
from graphrag.settings import SearchSettings, Settings
from graphrag.text_input import read_stored

__all__ = ["check_limits", "kb_scope", "load_kb_scopes", "search_knowledge_base"]


def kb_scope(settings: Settings, kb: KnowledgeBase) -> KbScope:
    """What retrieval may do in this base, from its indexing strategy and graph switches."""
    indexing = read_stored(IndexingStrategy, kb.indexing)
    return KbScope(
        kb_id=kb.id,
        vector=indexing.vector,
        keyword=indexing.keyword,
        graph_on=kb_graph_on(settings, kb),
    )


def load_kb_scopes(
    session: Session, settings: Settings, tenant_id: uuid.UUID, kb_ids: Sequence[uuid.UUID]
) -> list[KbScope]:
    """The scopes of several live bases of this tenant in one query; any missing one is 404."""
    wanted = list(dict.fromkeys(kb_ids))
    rows = session.execute(
        select(KnowledgeBase).where(
            KnowledgeBase.id.in_(wanted),
            KnowledgeBase.tenant_id == tenant_id,
            KnowledgeBase.status == KnowledgeBaseStatus.ACTIVE,
        )
    ).scalars()
    by_id = {kb.id: kb for kb in rows}
    missing = [str(kb_id) for kb_id in wanted if kb_id not in by_id]
    if missing:
        raise NotFoundError("knowledge base not found", kb_ids=missing)
    return [kb_scope(settings, by_id[kb_id]) for kb_id in wanted]


def check_limits(settings: SearchSettings, body: SearchRequest) -> None:
    """Refuse (422) what the settings cap: query length, top_k, size of the document filter."""
    if len(body.query) > settings.max_query_chars:
        raise InvalidInputError(
            f"the query exceeds {settings.max_query_chars} characters", length=len(body.query)
        )
    if body.top_k is not None and body.top_k > settings.max_top_k:
        raise InvalidInputError(f"top_k may not exceed {settings.max_top_k}", top_k=body.top_k)
    if body.knowledge_ids is not None and len(body.knowledge_ids) > settings.max_knowledge_ids:
        raise InvalidInputError(
            f"knowledge_ids may list at most {settings.max_knowledge_ids} documents"
        )
    if not (body.use_vector or body.use_keyword or body.use_graph):
        raise InvalidInputError("at least one of use_vector, use_keyword, use_graph must be true")


def search_knowledge_base(
    session: Session,
    settings: Settings,
    embedder: Embedder,
    tenant_id: uuid.UUID,
    kb_id: uuid.UUID,
    body: SearchRequest,
    graph: GraphSource | None = None,
) -> SearchResponse:
    """Ranked chunks of one live base of this tenant (404 otherwise) for a search request."""
    scope = kb_scope(settings, get_kb_row(session, tenant_id, kb_id))
    search = settings.search
    check_limits(search, body)
    request = RetrievalRequest(
        query=body.query,
        scopes=[scope],
        knowledge_ids=body.knowledge_ids,
        top_k=body.top_k or search.top_k,
        vector_threshold=(
            search.vector_threshold if body.vector_threshold is None else body.vector_threshold
        ),
        keyword_threshold=(
            search.keyword_threshold if body.keyword_threshold is None else body.keyword_threshold
        ),
        use_vector=body.use_vector,
        use_keyword=body.use_keyword,
        use_graph=body.use_graph,
    )
    result = retrieve(session, embedder, search, request, graph)
    return SearchResponse(
        kb_id=kb_id,
        query=body.query,
        hits=result.hits,
        vector_used=result.vector_used,
        keyword_used=result.keyword_used,
        graph_used=result.graph_used,
        graph_seeds=result.graph_seeds,
        graph_truncated=result.graph_truncated,
        unsearchable_vectors=result.unsearchable_vectors,
        timings=result.timings,
    )
