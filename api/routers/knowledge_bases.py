"""Knowledge bases: create, list, read, change, delete."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, status

from api.deps import GraphStoreDep, RelayDep, SessionDep, SettingsDep, TenantDep
from api.dispatch import commit_and_kick
from graphrag.ingest.graph import switch as graph_switch
from graphrag.kb import service
from graphrag.kb.deletion import KbDeletionPublic, kb_deletion
from graphrag.kb.schemas import KnowledgeBaseCreate, KnowledgeBasePublic, KnowledgeBaseUpdate

router = APIRouter(prefix="/api/v1/knowledge-bases", tags=["knowledge bases"])


@router.post("", status_code=status.HTTP_201_CREATED)
def create_knowledge_base(
    body: KnowledgeBaseCreate,
    session: SessionDep,
    settings: SettingsDep,
    graph: GraphStoreDep,
    tenant: TenantDep,
) -> KnowledgeBasePublic:
    """Create a knowledge base; chunking defaults come from the settings."""
    return service.create_kb(session, settings, graph, tenant, body)


@router.get("")
def list_knowledge_bases(
    session: SessionDep, settings: SettingsDep, tenant: TenantDep
) -> list[KnowledgeBasePublic]:
    return service.list_kbs(session, settings, tenant)


@router.get("/{kb_id}")
def get_knowledge_base(
    kb_id: uuid.UUID, session: SessionDep, settings: SettingsDep, tenant: TenantDep
) -> KnowledgeBasePublic:
    return service.get_kb(session, settings, tenant, kb_id)


@router.patch("/{kb_id}")
def update_knowledge_base(
    kb_id: uuid.UUID,
    body: KnowledgeBaseUpdate,
    session: SessionDep,
    settings: SettingsDep,
    graph: GraphStoreDep,
    relay: RelayDep,
    tenant: TenantDep,
) -> KnowledgeBasePublic:
    """Change fields; new chunking applies to documents parsed afterwards.

    Turning the graph on queues the extraction of the base's completed documents (each one's
    `graph` stage counts its chunks down); turning it off stops the extraction still owed.
    """
    outcome = graph_switch.update_base(session, settings, graph, tenant, kb_id, body)
    if outcome.tasks_queued:
        commit_and_kick(session, relay)
    return outcome.base


@router.delete("/{kb_id}", status_code=status.HTTP_202_ACCEPTED)
def delete_knowledge_base(
    kb_id: uuid.UUID, session: SessionDep, relay: RelayDep, tenant: TenantDep
) -> dict[str, str]:
    """Hide the base at once; its graph, documents, chunks and files are purged afterwards."""
    deleted = service.request_kb_delete(session, tenant, kb_id)
    commit_and_kick(session, relay)
    return {"id": str(deleted), "status": "deleting"}


@router.get("/{kb_id}/deletion")
def get_knowledge_base_deletion(
    kb_id: uuid.UUID, session: SessionDep, tenant: TenantDep
) -> KbDeletionPublic:
    """How far the deletion of a base has gone: rows left, purge runs, the last error. 404 once
    the base is gone (or when it is not being deleted)."""
    return kb_deletion(session, tenant, kb_id)
