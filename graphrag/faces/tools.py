"""The MCP server's tools as plain functions: each checks the caller's capability, then calls
the core function the matching REST route calls, inside the caller's tenant.

A base is named by its name, `kb/<name>` or its id; `ask` also takes several joined by `+`.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import Session

from graphrag.auth.models import Capability, Principal
from graphrag.chat.schemas import ChatRequest, Reference
from graphrag.chat.service import complete_turn, start_stateless_turn
from graphrag.db.engine import session_scope
from graphrag.errors import (
    InvalidInputError,
    NotFoundError,
    UnknownModelError,
)
from graphrag.faces.model_ids import resolve_kb, resolve_model
from graphrag.faces.services import FaceServices
from graphrag.graph.search_models import GraphSearchRequest, GraphSearchResponse
from graphrag.ingest import documents
from graphrag.ingest.schemas import KnowledgePublic, KnowledgeStages, TextImport
from graphrag.kb.service import list_kbs
from graphrag.search.graph_search import GraphRead, search_graph
from graphrag.search.kb_search import search_knowledge_base
from graphrag.search.models import SearchRequest, SearchResponse
from graphrag.search.retrieval import GraphSource
from graphrag.settings import Settings

__all__ = [
    "DocumentStatus",
    "KnowledgeAnswer",
    "KnowledgeBaseSummary",
    "add_text_document",
    "ask",
    "document_status",
    "graph_search",
    "list_knowledge_bases",
    "search",
]


class KnowledgeBaseSummary(BaseModel):
    id: uuid.UUID
    name: str
    description: str
    graph_on: bool


class KnowledgeAnswer(BaseModel):
    """An answer citing its passages as [n], with those passages."""

    answer: str
    references: list[Reference]
    entities: list[str]


class DocumentStatus(BaseModel):
    document: KnowledgePublic
    stages: KnowledgeStages


def _valid(model: type[BaseModel], **fields: Any) -> Any:
    """`model` built from tool arguments; what it refuses is a 422 like the REST body's."""
    try:
        return model(**fields)
    except ValidationError as exc:
        problems = [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
        raise InvalidInputError("the arguments are not valid", errors=problems) from exc


def list_knowledge_bases(
    services: FaceServices, principal: Principal
) -> list[KnowledgeBaseSummary]:
    """The caller's live knowledge bases (needs `read`)."""
    tenant = principal.require(Capability.READ)
    with session_scope(services.chat.sessions) as session:
        kbs = list_kbs(session, services.settings, tenant)
    return [
        KnowledgeBaseSummary(
            id=kb.id, name=kb.name, description=kb.description, graph_on=kb.graph_on
        )
        for kb in kbs
    ]


def search(
    services: FaceServices,
    principal: Principal,
    kb: str,
    query: str,
    top_k: int | None = None,
    use_graph: bool = True,
) -> SearchResponse:
    """Vector, keyword and (when the base's graph is on) graph-ranked passages of one base,
    fused as the REST search does (needs `read`)."""
    tenant = principal.require(Capability.READ)
    body: SearchRequest = _valid(SearchRequest, query=query, top_k=top_k, use_graph=use_graph)
    chat = services.chat
    graph = GraphSource(store=chat.graph)
    with session_scope(chat.sessions) as session:
        kb_id = resolve_kb(session, tenant, kb)
        return search_knowledge_base(
            session, services.settings, chat.embedder, tenant, kb_id, body, graph
        )


def graph_search(
    services: FaceServices,
    principal: Principal,
    kb: str,
    entity: str,
    relation_types: list[str] | None = None,
    limit: int | None = None,
) -> GraphSearchResponse:
    """Entities whose name contains `entity`, their relations and source chunks (needs `read`)."""
    tenant = principal.require(Capability.READ)
    body: GraphSearchRequest = _valid(
        GraphSearchRequest, entity=entity, relation_types=relation_types, limit=limit
    )
    with session_scope(services.chat.sessions) as session:
        kb_id = resolve_kb(session, tenant, kb)
        read = GraphRead(session, services.settings, services.chat.graph, tenant, kb_id)
        return search_graph(read, body)


def _kb_ids(session: Session, settings: Settings, tenant: uuid.UUID, kb: str) -> list[uuid.UUID]:
    try:
        return resolve_model(session, settings, tenant, kb, bare=True)
    except UnknownModelError as exc:
        raise NotFoundError("knowledge base not found", kb=kb) from exc


def ask(
    services: FaceServices, principal: Principal, kb: str, question: str, use_graph: bool = True
) -> KnowledgeAnswer:
    """The knowledge chat's answer, without a stored session (needs `write`, like the chat)."""
    tenant = principal.require(Capability.WRITE)
    with session_scope(services.chat.sessions) as session:
        kb_ids = _kb_ids(session, services.settings, tenant, kb)
    request: ChatRequest = _valid(ChatRequest, query=question, kb_ids=kb_ids, use_graph=use_graph)
    turn = start_stateless_turn(services.chat, tenant, request, history=[])
    complete_turn(services.chat, turn)
    if turn.failure is not None:
        raise turn.failure  # by its own code: the LLM down, a request it refused, any error
    return KnowledgeAnswer(answer=turn.answer, references=turn.references, entities=turn.entities)


def add_text_document(
    services: FaceServices, principal: Principal, kb: str, title: str, content: str
) -> KnowledgePublic:
    """Add text (Markdown) as a document and queue it for parsing (needs `write`)."""
    tenant = principal.require(Capability.WRITE)
    body: TextImport = _valid(TextImport, title=title, content=content)
    new = documents.text_import_document(services.settings, body)
    with session_scope(services.chat.sessions) as session:
        kb_id = resolve_kb(session, tenant, kb)
        doc = documents.add_document(
            session, services.settings, services.storage, tenant, kb_id, new
        )
    services.relay.kick()  # the task committed with the document: the relay sends it now
    return doc


def document_status(
    services: FaceServices, principal: Principal, document_id: str
) -> DocumentStatus:
    """A document's status, counts and per-stage progress (needs `read`)."""
    tenant = principal.require(Capability.READ)
    try:
        knowledge_id = uuid.UUID(document_id)
    except ValueError as exc:
        raise InvalidInputError("document_id must be a document's id", id=document_id) from exc
    with session_scope(services.chat.sessions) as session:
        return DocumentStatus(
            document=documents.get_document(session, tenant, knowledge_id),
            stages=documents.get_stages(session, tenant, knowledge_id),
        )
