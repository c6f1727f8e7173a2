"""Documents of a knowledge base: add (file, URL, text), read, re-parse, cancel, delete.

A write that calls for work (an upload, a re-parse, a delete) writes its task into the outbox
in the same transaction as the document's change (`db.lifecycle`): the caller commits, then
wakes the relay, and a worker never sees a missing row nor a document waiting on no task.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, replace

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Row
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from graphrag.db import lifecycle
from graphrag.db.enums import KnowledgeSource, ParseStatus, Stage, StageStatus
from graphrag.db.models import Chunk, Knowledge, core_table
from graphrag.db.pages import Page, paginate
from graphrag.db.tenant_rows import Owner, tenant_row
from graphrag.db.visibility import chunk_of_current_attempt
from graphrag.errors import (
    ConflictError,
    DuplicateDocumentError,
    FileTooLargeError,
)
from graphrag.extraction.overrides import ExtractOverride
from graphrag.ingest.document_settings import effective_of, graph_impact, stored_override
from graphrag.ingest.file_names import safe_file_name
from graphrag.ingest.parsers.file_types import detect_file_type
from graphrag.ingest.schemas import (
    ChunkPublic,
    ChunkUpdate,
    IngestionUsage,
    KnowledgePublic,
    KnowledgeStages,
    KnowledgeUpdate,
    KnowledgeUpdated,
    StageProgress,
    TextImport,
)
from graphrag.ingest.storage import FileStorage
from graphrag.kb.service import require_live_kb
from graphrag.settings import Settings

__all__ = [
    "NewDocument",
    "add_document",
    "get_chunk",
    "get_document",
    "get_document_row",
    "get_stages",
    "list_chunks",
    "list_documents",
    "request_cancel",
    "request_delete",
    "request_reparse",
    "text_document",
    "text_import_document",
    "update_chunk",
    "update_document",
]

_K = core_table(Knowledge).c
# An upload's duplicate check, built once on the table (as its insert in `db.lifecycle`): each
# file of a batch runs it, and the ORM's entity load cost more CPU than the statement.
_DUPLICATE = select(_K.id, _K.file_name).where(
    _K.kb_id == bindparam("p_kb"),
    _K.sha256 == bindparam("p_sha256"),
    _K.parse_status != ParseStatus.DELETING,
)


@dataclass(frozen=True)
class NewDocument:
    """What a caller hands in: the bytes and what the client said about them."""

    data: bytes
    file_name: str
    media_type: str | None
    source: KnowledgeSource
    source_url: str | None = None
    extract_override: ExtractOverride | None = None  # the document's own extraction settings


def get_document_row(
    session: Session, tenant_id: uuid.UUID, knowledge_id: uuid.UUID, *, for_update: bool = False
) -> Knowledge:
    """A document of this tenant that is not being deleted."""
    return tenant_row(
        session,
        Knowledge,
        tenant_id,
        knowledge_id,
        what="document",
        id_key="knowledge_id",
        where=[Knowledge.parse_status != ParseStatus.DELETING],
        for_update=for_update,
    )


def _existing_duplicate(
    session: Session, kb_id: uuid.UUID, sha256: str
) -> Row[uuid.UUID, str] | None:
    """(id, file_name) of the live document of this base with the same content, if any."""
    return session.execute(_DUPLICATE, {"p_kb": kb_id, "p_sha256": sha256}).first()


def _duplicate_error(existing: Row[uuid.UUID, str]) -> DuplicateDocumentError:
    return DuplicateDocumentError(
        "this document is already in the knowledge base",
        existing_id=str(existing.id),
        file_name=existing.file_name,
    )


def add_document(
    session: Session,
    settings: Settings,
    storage: FileStorage,
    tenant_id: uuid.UUID,
    kb_id: uuid.UUID,
    new: NewDocument,
) -> KnowledgePublic:
    """Validate, de-duplicate and store a document as `pending`, its processing task in the
    outbox (the caller commits and wakes the relay).

    Size and emptiness are checked by the caller while reading; here the type is told from the
    content (415 on mismatch), a sha256 already in the base answers 409 with the existing id,
    and the original is written before the row is inserted, and removed if the insert fails.
    """
    require_live_kb(session, tenant_id, kb_id)
    own = stored_override(session, settings, tenant_id, kb_id, new.extract_override)
    file_type = detect_file_type(
        new.data,
        file_name=new.file_name,
        media_type=new.media_type,
        max_control_ratio=settings.ingest.max_control_char_ratio,
        docx_max_entries=settings.ingest.docx_max_entries,
    )
    sha256 = hashlib.sha256(new.data).hexdigest()
    existing = _existing_duplicate(session, kb_id, sha256)
    if existing is not None:
        raise _duplicate_error(existing)
    doc_id = uuid.uuid4()
    path = storage.save(kb_id, doc_id, new.data)
    row = {
        "id": doc_id,
        "kb_id": kb_id,
        "tenant_id": tenant_id,
        "source": new.source,
        "file_name": safe_file_name(
            new.file_name, settings.ingest.file_name_max_chars, settings.ingest.file_name_max_bytes
        ),
        "file_type": file_type.value,
        "file_size": len(new.data),
        "sha256": sha256,
        "source_url": new.source_url,
        "storage_path": str(path),
    }
    if own is not None:
        row["extract_override"] = own
    try:
        added = lifecycle.insert_pending(session, row)
    except IntegrityError as exc:
        # Two identical uploads raced: the unique index kept one, this one is the duplicate.
        session.rollback()
        storage.delete_document(kb_id, doc_id)
        existing = _existing_duplicate(session, kb_id, sha256)
        if existing is None:
            raise ConflictError("the document could not be stored, try again") from exc
        raise _duplicate_error(existing) from exc
    return KnowledgePublic.model_validate(added)


def text_import_document(settings: Settings, body: TextImport) -> NewDocument:
    """A text import as a document; `FileTooLargeError` past the upload size cap."""
    if len(body.content.encode("utf-8")) > settings.max_file_size_bytes:
        raise FileTooLargeError(f"the text exceeds the {settings.max_file_size_mb} MB limit")
    return replace(text_document(body.title, body.content), extract_override=body.extract_override)


def text_document(title: str, content: str) -> NewDocument:
    """Raw text as a document of its own (stored like an upload, typed as Markdown)."""
    name = title if title.lower().endswith((".md", ".txt")) else f"{title}.md"
    return NewDocument(
        data=content.encode("utf-8"),
        file_name=name,
        media_type=None,
        source=KnowledgeSource.TEXT,
    )


def list_documents(
    session: Session,
    tenant_id: uuid.UUID,
    kb_id: uuid.UUID,
    *,
    page: int,
    page_size: int,
    status: ParseStatus | None = None,
) -> Page[KnowledgePublic]:
    require_live_kb(session, tenant_id, kb_id)
    where = [Knowledge.kb_id == kb_id, Knowledge.parse_status != ParseStatus.DELETING]
    if status is not None:
        where.append(Knowledge.parse_status == status)
    query = select(Knowledge).where(*where).order_by(Knowledge.created_at.desc(), Knowledge.id)
    return paginate(
        session, query, page=page, page_size=page_size, public=KnowledgePublic.model_validate
    )


def get_document(
    session: Session, tenant_id: uuid.UUID, knowledge_id: uuid.UUID
) -> KnowledgePublic:
    """The document, with the extraction config its chunks use."""
    doc = get_document_row(session, tenant_id, knowledge_id)
    effective = effective_of(session, doc)
    return KnowledgePublic.model_validate(doc).model_copy(
        update={"effective_extract_config": effective}
    )


def update_document(
    session: Session,
    settings: Settings,
    tenant_id: uuid.UUID,
    knowledge_id: uuid.UUID,
    body: KnowledgeUpdate,
) -> KnowledgeUpdated:
    """Set the document's own extraction settings (checked over its base's). A change to what
    its graph is extracted with offers a rebuild of it; `rebuild` starts one at once whenever
    its base builds a graph (the caller commits and wakes the relay)."""
    doc = get_document_row(session, tenant_id, knowledge_id, for_update=True)
    own = stored_override(session, settings, tenant_id, doc.kb_id, body.extract_override)
    new = ExtractOverride.model_validate(own) if own is not None else None
    impact = graph_impact(session, settings, doc, new)
    doc.extract_override = own
    session.flush()
    queued = body.rebuild and impact.graph_on
    if queued:
        request_reparse(session, tenant_id, doc.id)
    return KnowledgeUpdated(
        knowledge=get_document(session, tenant_id, doc.id),
        graph_rebuild_offered=impact.changed and not queued,
        rebuild_queued=queued,
    )


def get_stages(session: Session, tenant_id: uuid.UUID, knowledge_id: uuid.UUID) -> KnowledgeStages:
    doc = get_document_row(session, tenant_id, knowledge_id)
    stages = {
        Stage(name): StageProgress.model_validate(value) for name, value in doc.progress.items()
    }
    graph = stages.get(Stage.GRAPH)
    if graph is not None and graph.status is StageStatus.RUNNING:
        # Derived from the counter, so graph tasks need not write progress themselves.
        settled = graph.total - doc.pending_subtasks_count
        done = doc.parse_status == ParseStatus.COMPLETED
        status = StageStatus.DONE if done else StageStatus.RUNNING
        stages[Stage.GRAPH] = graph.model_copy(update={"done": settled, "status": status})
    if graph is not None and graph.status is not StageStatus.SKIPPED:
        stages[Stage.GRAPH] = stages[Stage.GRAPH].model_copy(update={"seconds": doc.graph_seconds})
    return KnowledgeStages(
        knowledge_id=doc.id,
        attempt=doc.attempt,
        parse_status=doc.parse_status,
        stages=stages,
        usage=IngestionUsage.model_validate(doc),
    )


def list_chunks(
    session: Session, tenant_id: uuid.UUID, knowledge_id: uuid.UUID, *, page: int, page_size: int
) -> Page[ChunkPublic]:
    doc = get_document_row(session, tenant_id, knowledge_id)
    where = [Chunk.knowledge_id == doc.id, Chunk.attempt == doc.attempt]
    query = select(Chunk).where(*where).order_by(Chunk.seq)
    return paginate(
        session, query, page=page, page_size=page_size, public=ChunkPublic.model_validate
    )


def _chunk_row(
    session: Session, tenant_id: uuid.UUID, chunk_id: uuid.UUID, *, for_update: bool = False
) -> Chunk:
    """A chunk of the current version of a document of this tenant, else 404."""
    return tenant_row(
        session,
        Chunk,
        tenant_id,
        chunk_id,
        what="chunk",
        id_key="chunk_id",
        owner=Owner(Knowledge, chunk_of_current_attempt()),
        where=[Knowledge.parse_status != ParseStatus.DELETING],
        for_update=for_update,
    )


def get_chunk(session: Session, tenant_id: uuid.UUID, chunk_id: uuid.UUID) -> ChunkPublic:
    """A chunk of the current version of a document of this tenant, else 404: what the
    document's chunk list shows (a citation or a graph source opened by id)."""
    return ChunkPublic.model_validate(_chunk_row(session, tenant_id, chunk_id))


def update_chunk(
    session: Session, tenant_id: uuid.UUID, chunk_id: uuid.UUID, body: ChunkUpdate
) -> ChunkPublic:
    """Enable or disable a chunk. A disabled chunk is left out of search, the chat and the
    graph's sources (graph-search drops what only it supports); its graph stays, so enabling it
    again brings everything back without a new extraction."""
    chunk = _chunk_row(session, tenant_id, chunk_id, for_update=True)
    chunk.enabled = body.enabled
    session.flush()
    return ChunkPublic.model_validate(chunk)


def request_reparse(
    session: Session, tenant_id: uuid.UUID, knowledge_id: uuid.UUID
) -> tuple[uuid.UUID, int]:
    """Start a new attempt with its processing task: tasks of the old one find themselves
    stale and leave no trace."""
    doc = get_document_row(session, tenant_id, knowledge_id, for_update=True)
    attempt = lifecycle.start_new_attempt(session, doc.id, doc.attempt)
    session.expire(doc)  # changed by the statement, not through the loaded row
    if attempt is None:
        raise ConflictError("the document changed meanwhile, try again")
    return doc.id, attempt


def request_cancel(
    session: Session, tenant_id: uuid.UUID, knowledge_id: uuid.UUID
) -> KnowledgePublic:
    """Stop a document's processing; a finished document cannot be cancelled (409)."""
    doc = get_document_row(session, tenant_id, knowledge_id, for_update=True)
    if not lifecycle.cancel(session, doc.id, doc.attempt):
        raise ConflictError(
            f"a {doc.parse_status.value} document cannot be cancelled", status=doc.parse_status
        )
    session.refresh(doc)
    return KnowledgePublic.model_validate(doc)


def request_delete(session: Session, tenant_id: uuid.UUID, knowledge_id: uuid.UUID) -> uuid.UUID:
    """Mark the document `deleting` (invisible from now on) with the task that purges it."""
    doc = get_document_row(session, tenant_id, knowledge_id, for_update=True)
    lifecycle.mark_deleting(session, doc.id, doc.attempt)
    session.expire(doc)  # changed by the statement, not through the loaded row
    return doc.id
