"""Create, read, change and delete knowledge bases."""

from __future__ import annotations

import uuid
from collections.abc import Collection

from sqlalchemy import bindparam, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from graphrag.db.enums import KnowledgeBaseStatus
from graphrag.db.lifecycle import mark_base_deleting
from graphrag.db.models import KnowledgeBase
from graphrag.db.outbox import delete_knowledge_base, enqueue
from graphrag.db.tenant_rows import tenant_row
from graphrag.errors import ConflictError, NotFoundError
from graphrag.extraction.models import ExtractConfig, check_extract_config
from graphrag.graph.store import GraphStore
from graphrag.kb.chunking import ChunkingConfig, check_chunking, default_chunking
from graphrag.kb.schemas import (
    IndexingStrategy,
    KnowledgeBaseCreate,
    KnowledgeBasePublic,
    KnowledgeBaseUpdate,
    graph_on,
)
from graphrag.settings import Settings
from graphrag.text_input import read_stored

__all__ = [
    "create_kb",
    "find_live_kbs",
    "get_kb",
    "get_kb_row",
    "kb_graph_on",
    "list_kbs",
    "request_kb_delete",
    "require_live_kb",
    "stored_graph_on",
    "to_public",
    "update_kb",
]


def kb_graph_on(settings: Settings, kb: KnowledgeBase) -> bool:
    return stored_graph_on(settings, kb.indexing, kb.extract_config)


def stored_graph_on(settings: Settings, indexing: object, extract_config: object) -> bool:
    """The graph switch from a base's two stored configurations (their JSON columns)."""
    return graph_on(
        settings,
        read_stored(IndexingStrategy, indexing),
        read_stored(ExtractConfig, extract_config),
    )


def to_public(settings: Settings, kb: KnowledgeBase) -> KnowledgeBasePublic:
    public = read_stored(KnowledgeBasePublic, kb)
    return public.model_copy(update={"graph_on": kb_graph_on(settings, kb)})


def get_kb_row(
    session: Session, tenant_id: uuid.UUID, kb_id: uuid.UUID, *, for_update: bool = False
) -> KnowledgeBase:
    """The live knowledge base of this tenant; another tenant's id is simply not found."""
    return tenant_row(
        session,
        KnowledgeBase,
        tenant_id,
        kb_id,
        what="knowledge base",
        id_key="kb_id",
        where=[KnowledgeBase.status == KnowledgeBaseStatus.ACTIVE],
        for_update=for_update,
    )


# The per-file check of an upload, by id alone: loading the whole base (its JSON configurations
# decoded) for every file of a batch was a fifth of the upload's CPU.
_LIVE_KB = select(KnowledgeBase.id).where(
    KnowledgeBase.id == bindparam("p_kb"),
    KnowledgeBase.tenant_id == bindparam("p_tenant"),
    KnowledgeBase.status == KnowledgeBaseStatus.ACTIVE,
)


def require_live_kb(session: Session, tenant_id: uuid.UUID, kb_id: uuid.UUID) -> None:
    """`NotFoundError` unless this tenant's base exists and is live, as `get_kb_row` would say."""
    if session.execute(_LIVE_KB, {"p_kb": kb_id, "p_tenant": tenant_id}).first() is None:
        raise NotFoundError("knowledge base not found", kb_id=str(kb_id))


def _check_limits(
    settings: Settings, chunking: ChunkingConfig | None, extract: ExtractConfig | None
) -> None:
    """The caps a base's own configuration must respect (422 `invalid_input` otherwise)."""
    if chunking is not None:
        check_chunking(chunking, settings.ingest)
    if extract is not None:
        check_extract_config(extract, settings.extraction)


def _name_taken(name: str) -> ConflictError:
    return ConflictError("a knowledge base with this name already exists", name=name)


def create_kb(
    session: Session,
    settings: Settings,
    graph: GraphStore,
    tenant_id: uuid.UUID,
    data: KnowledgeBaseCreate,
) -> KnowledgeBasePublic:
    """Store a new knowledge base; its graph indexes are created when its graph is on."""
    _check_limits(settings, data.chunking, data.extract_config)
    chunking = data.chunking or default_chunking(settings.ingest)
    kb = KnowledgeBase(
        id=uuid.uuid4(),
        tenant_id=tenant_id,
        name=data.name,
        description=data.description,
        status=KnowledgeBaseStatus.ACTIVE,
        chunking=chunking.model_dump(),
        indexing=data.indexing.model_dump(),
        extract_config=data.extract_config.model_dump(),
        embedding_model=settings.embedding.model,
        chat_model=settings.llm.model,
    )
    session.add(kb)
    try:
        session.flush()
    except IntegrityError as exc:
        raise _name_taken(data.name) from exc
    session.refresh(kb)
    if kb_graph_on(settings, kb):
        graph.ensure_kb_indexes(kb.id)
    return to_public(settings, kb)


def list_kbs(
    session: Session, settings: Settings, tenant_id: uuid.UUID
) -> list[KnowledgeBasePublic]:
    rows = session.execute(
        select(KnowledgeBase)
        .where(
            KnowledgeBase.tenant_id == tenant_id,
            KnowledgeBase.status == KnowledgeBaseStatus.ACTIVE,
        )
        .order_by(KnowledgeBase.created_at, KnowledgeBase.id)
    ).scalars()
    return [to_public(settings, kb) for kb in rows]


def find_live_kbs(
    session: Session,
    tenant_id: uuid.UUID,
    names: Collection[str],
    ids: Collection[uuid.UUID],
) -> list[tuple[uuid.UUID, str]]:
    """(id, name) of the tenant's live bases called one of `names` or with one of `ids`, in
    one query (none when both are empty)."""
    if not names and not ids:
        return []
    rows = session.execute(
        select(KnowledgeBase.id, KnowledgeBase.name).where(
            KnowledgeBase.tenant_id == tenant_id,
            KnowledgeBase.status == KnowledgeBaseStatus.ACTIVE,
            or_(KnowledgeBase.name.in_(list(names)), KnowledgeBase.id.in_(list(ids))),
        )
    )
    return [(kb_id, name) for kb_id, name in rows]


def get_kb(
    session: Session, settings: Settings, tenant_id: uuid.UUID, kb_id: uuid.UUID
) -> KnowledgeBasePublic:
    return to_public(settings, get_kb_row(session, tenant_id, kb_id))


def update_kb(
    session: Session, settings: Settings, kb: KnowledgeBase, data: KnowledgeBaseUpdate
) -> None:
    """Change the given fields of the base's row, locked by the caller (what follows from its
    graph switch is `ingest.graph.switch.update_base`'s). New chunking applies to documents
    parsed from now on."""
    _check_limits(settings, data.chunking, data.extract_config)
    changes = data.model_dump(exclude_unset=True, exclude_none=True)
    for field, value in changes.items():
        setattr(kb, field, value)
    try:
        session.flush()
    except IntegrityError as exc:
        raise _name_taken(str(data.name)) from exc
    session.refresh(kb)


def request_kb_delete(session: Session, tenant_id: uuid.UUID, kb_id: uuid.UUID) -> uuid.UUID:
    """Mark the base and all its documents `deleting`, with the purge task in the outbox (the
    caller commits and wakes the relay).

    From here the base is invisible to every read; the purge task is resumable, and the
    reconciler re-enqueues it if a worker dies half way.
    """
    kb = get_kb_row(session, tenant_id, kb_id, for_update=True)
    kb.status = KnowledgeBaseStatus.DELETING
    mark_base_deleting(session, kb.id)
    enqueue(session, delete_knowledge_base(kb.id))
    return kb.id
