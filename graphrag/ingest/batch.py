"""Adding local files to a knowledge base by name, through the same service as the REST API."""

from __future__ import annotations

import mimetypes
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import KnowledgeBaseStatus, KnowledgeSource, ParseStatus, Stage
from graphrag.db.models import Knowledge, KnowledgeBase
from graphrag.errors import DuplicateDocumentError, GraphragError
from graphrag.extraction.models import ExtractConfig
from graphrag.graph.store import GraphStore
from graphrag.ingest.documents import NewDocument, add_document
from graphrag.ingest.schemas import StageProgress
from graphrag.ingest.storage import FileStorage
from graphrag.kb.schemas import IndexingStrategy, KnowledgeBaseCreate
from graphrag.kb.service import create_kb
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant

__all__ = [
    "DocumentState",
    "Submitted",
    "ensure_kb_by_name",
    "find_kb_by_name",
    "poll_states",
    "submit_files",
]


class Submitted(BaseModel):
    path: str
    knowledge_id: uuid.UUID | None
    duplicate: bool = False
    error: str | None = None


class DocumentState(BaseModel):
    knowledge_id: uuid.UUID
    status: ParseStatus
    progress: dict[Stage, StageProgress]
    chunk_count: int
    entity_count: int
    relation_count: int
    failed_chunk_count: int
    error: str | None
    llm_calls: int = 0
    llm_prompt_tokens: int = 0
    llm_completion_tokens: int = 0
    llm_seconds: float = 0.0

    @property
    def terminal(self) -> bool:
        return self.status not in ParseStatus.working()


def find_kb_by_name(session: Session, tenant: uuid.UUID, name: str) -> uuid.UUID | None:
    """The id of the tenant's live base called `name`, if there is one."""
    return session.execute(
        select(KnowledgeBase.id).where(
            KnowledgeBase.tenant_id == tenant,
            KnowledgeBase.name == name,
            KnowledgeBase.status == KnowledgeBaseStatus.ACTIVE,
        )
    ).scalar_one_or_none()


def ensure_kb_by_name(
    sessions: sessionmaker[Session],
    settings: Settings,
    graph: GraphStore,
    name: str,
    *,
    graph_enabled: bool,
    tags: list[str] | None = None,
) -> uuid.UUID:
    """The id of the default tenant's live base called `name`, created if missing."""
    with session_scope(sessions) as session:
        tenant = ensure_tenant(session, settings.api.default_tenant)
        found = find_kb_by_name(session, tenant, name)
        if found is not None:
            return found
        create = KnowledgeBaseCreate(
            name=name,
            indexing=IndexingStrategy(graph_enabled=graph_enabled),
            extract_config=ExtractConfig(enabled=graph_enabled, tags=tags or []),
        )
        return create_kb(session, settings, graph, tenant, create).id


def submit_files(
    sessions: sessionmaker[Session],
    settings: Settings,
    storage: FileStorage,
    kb_id: uuid.UUID,
    paths: Iterable[Path],
) -> list[Submitted]:
    """Add each file (a duplicate points at the existing document), each new one with its
    processing task in the outbox, `settings.cli.upload_concurrency` at a time; results come in
    the order of `paths`."""

    def submit(path: Path) -> Submitted:
        return _submit_one(sessions, settings, storage, kb_id, path)

    with ThreadPoolExecutor(max_workers=settings.cli.upload_concurrency) as pool:
        return list(pool.map(submit, paths))


def _submit_one(
    sessions: sessionmaker[Session],
    settings: Settings,
    storage: FileStorage,
    kb_id: uuid.UUID,
    path: Path,
) -> Submitted:
    new = NewDocument(
        data=path.read_bytes(),
        file_name=path.name,
        media_type=mimetypes.guess_type(path.name)[0],
        source=KnowledgeSource.FILE,
    )
    try:
        with session_scope(sessions) as session:
            tenant = ensure_tenant(session, settings.api.default_tenant)
            doc = add_document(session, settings, storage, tenant, kb_id, new)
    except DuplicateDocumentError as exc:
        existing = uuid.UUID(str(exc.details["existing_id"]))
        return Submitted(path=str(path), knowledge_id=existing, duplicate=True)
    except GraphragError as exc:
        return Submitted(path=str(path), knowledge_id=None, error=exc.message)
    return Submitted(path=str(path), knowledge_id=doc.id)


def poll_states(sessions: sessionmaker[Session], ids: list[uuid.UUID]) -> list[DocumentState]:
    """The current state of each document, in the order of `ids`."""
    with session_scope(sessions) as session:
        rows = {
            doc.id: doc
            for doc in session.execute(select(Knowledge).where(Knowledge.id.in_(ids))).scalars()
        }
    return [
        DocumentState(
            knowledge_id=doc.id,
            status=doc.parse_status,
            progress=doc.progress,
            chunk_count=doc.chunk_count,
            entity_count=doc.entity_count,
            relation_count=doc.relation_count,
            failed_chunk_count=doc.failed_chunk_count,
            error=doc.error,
            llm_calls=doc.llm_calls,
            llm_prompt_tokens=doc.llm_prompt_tokens,
            llm_completion_tokens=doc.llm_completion_tokens,
            llm_seconds=doc.llm_seconds,
        )
        for i in ids
        if (doc := rows.get(i)) is not None
    ]
