"""Documents of a knowledge base: add (file, URL, text), list, read, re-parse, cancel, delete."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import replace
from functools import partial
from typing import Annotated

from fastapi import APIRouter, File, Form, Query, Request, UploadFile, status
from starlette.concurrency import run_in_threadpool

from api.auth import PrincipalDep
from api.deps import (
    AppStateDep,
    PagesDep,
    RelayDep,
    SessionDep,
    SettingsDep,
    StorageDep,
    TenantDep,
)
from api.dispatch import commit_and_kick
from api.route_bodies import TEXT_BODY
from api.state import AppState
from api.uploads import read_capped
from graphrag.db.engine import session_scope
from graphrag.db.enums import KnowledgeSource, ParseStatus
from graphrag.db.pages import Page
from graphrag.errors import FileTooLargeError, GraphragError
from graphrag.extraction.overrides import override_from_json
from graphrag.ingest import documents
from graphrag.ingest.schemas import (
    BatchItem,
    BatchUpload,
    ChunkPublic,
    ChunkUpdate,
    ItemError,
    KnowledgePublic,
    KnowledgeStages,
    KnowledgeUpdate,
    KnowledgeUpdated,
    TextImport,
    UrlImport,
)
from graphrag.ingest.url.fetch import fetch_url
from graphrag.kb.service import require_live_kb
from graphrag.outbox.relay_loop import RelayLoop
from graphrag.text_input import Bounded, InputText

router = APIRouter(prefix="/api/v1", tags=["documents"])


def _commit_new(session: SessionDep, relay: RelayLoop, doc: KnowledgePublic) -> KnowledgePublic:
    """The new document, committed with the processing task `add_document` wrote, which the
    relay sends now."""
    commit_and_kick(session, relay)
    return doc


@router.post("/knowledge-bases/{kb_id}/knowledge/file", status_code=status.HTTP_202_ACCEPTED)
def upload_file(
    kb_id: uuid.UUID,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    storage: StorageDep,
    relay: RelayDep,
    tenant: TenantDep,
    file: Annotated[UploadFile, File(description="PDF, PNG/JPEG/TIFF, TXT, Markdown, HTML, DOCX")],
    extract_override: Annotated[
        InputText | None,
        Form(description="the document's own extraction settings over its base's, as JSON"),
    ] = None,
) -> KnowledgePublic:
    """Upload a file; it is checked (size, type by content, duplicate) and queued for parsing."""
    cap = settings.max_file_size_bytes
    declared = int(request.headers.get("content-length") or 0)
    if declared > cap + settings.api.multipart_slack_bytes:
        raise FileTooLargeError(f"the file exceeds the {settings.max_file_size_mb} MB limit")
    new = documents.NewDocument(
        data=read_capped(file, cap),
        file_name=file.filename or "",
        media_type=file.content_type,
        source=KnowledgeSource.FILE,
        extract_override=override_from_json(extract_override),
    )
    doc = documents.add_document(session, settings, storage, tenant, kb_id, new)
    return _commit_new(session, relay, doc)


def _batch_item(
    session: SessionDep,
    settings: SettingsDep,
    storage: StorageDep,
    relay: RelayDep,
    tenant: uuid.UUID,
    kb_id: uuid.UUID,
    file: UploadFile,
) -> BatchItem:
    name = file.filename or ""
    try:
        new = documents.NewDocument(
            data=read_capped(file, settings.max_file_size_bytes),
            file_name=name,
            media_type=file.content_type,
            source=KnowledgeSource.FILE,
        )
        doc = documents.add_document(session, settings, storage, tenant, kb_id, new)
    except GraphragError as exc:
        session.rollback()
        error = ItemError(code=exc.code, message=exc.message, details=exc.details)
        return BatchItem(file_name=name, status=exc.http_status, error=error)
    return BatchItem(
        file_name=name, status=status.HTTP_202_ACCEPTED, knowledge=_commit_new(session, relay, doc)
    )


@router.post("/knowledge-bases/{kb_id}/knowledge/files", status_code=status.HTTP_207_MULTI_STATUS)
def upload_files(
    kb_id: uuid.UUID,
    session: SessionDep,
    settings: SettingsDep,
    storage: StorageDep,
    relay: RelayDep,
    tenant: TenantDep,
    files: Annotated[
        list[UploadFile],
        Bounded("api.max_batch_files"),  # more files: one 422, before any is read
        File(description="several files, each handled alone"),
    ],
) -> BatchUpload:
    """Upload several files at once; each is answered with its own status: 202 (queued),
    409 (a duplicate, with the existing id), 413, 415 or 422, as a single upload would be."""
    require_live_kb(session, tenant, kb_id)  # an unknown base is one 404, not one per file
    items = [_batch_item(session, settings, storage, relay, tenant, kb_id, f) for f in files]
    accepted = sum(item.status == status.HTTP_202_ACCEPTED for item in items)
    return BatchUpload(items=items, accepted=accepted, refused=len(items) - accepted)


def _check_kb(state: AppState, tenant: uuid.UUID, kb_id: uuid.UUID) -> None:
    with session_scope(state.sessions) as session:
        require_live_kb(session, tenant, kb_id)


def _add_fetched(
    state: AppState, tenant: uuid.UUID, kb_id: uuid.UUID, new: documents.NewDocument
) -> KnowledgePublic:
    with session_scope(state.sessions) as session:
        doc = documents.add_document(session, state.settings, state.storage, tenant, kb_id, new)
        return _commit_new(session, state.relay, doc)


@router.post("/knowledge-bases/{kb_id}/knowledge/url", status_code=status.HTTP_202_ACCEPTED)
async def import_url(
    kb_id: uuid.UUID,
    body: UrlImport,
    state: AppStateDep,
    principal: PrincipalDep,
    tenant: TenantDep,
) -> KnowledgePublic:
    """Fetch a public http(s) page or file and add it like an upload.

    The fetch runs on the URL import threads (`UrlImportGate`), not the server's shared pool,
    and holds no database connection: a slow site takes neither from the other routes. Over
    the caller's or the process's cap of fetches at once: 429 `url_import_busy`, at once.
    """
    settings = state.settings
    # 404 before fetching anything for another tenant
    await run_in_threadpool(_check_kb, state, tenant, kb_id)
    fetch = partial(fetch_url, str(body.url), settings.ingest, settings.max_file_size_bytes)
    new = await asyncio.wrap_future(state.url_imports.submit(principal.key_id or tenant, fetch))
    new = replace(new, extract_override=body.extract_override)
    return await run_in_threadpool(_add_fetched, state, tenant, kb_id, new)


@router.post(
    "/knowledge-bases/{kb_id}/knowledge/text",
    status_code=status.HTTP_202_ACCEPTED,
    dependencies=[TEXT_BODY],
)
def add_text(
    kb_id: uuid.UUID,
    body: TextImport,
    session: SessionDep,
    settings: SettingsDep,
    storage: StorageDep,
    relay: RelayDep,
    tenant: TenantDep,
) -> KnowledgePublic:
    """Add raw text (Markdown) as a document."""
    new = documents.text_import_document(settings, body)
    doc = documents.add_document(session, settings, storage, tenant, kb_id, new)
    return _commit_new(session, relay, doc)


@router.get("/knowledge-bases/{kb_id}/knowledge")
def list_documents(
    kb_id: uuid.UUID,
    session: SessionDep,
    tenant: TenantDep,
    pages: PagesDep,
    parse_status: Annotated[ParseStatus | None, Query(alias="status")] = None,
) -> Page[KnowledgePublic]:
    return documents.list_documents(
        session, tenant, kb_id, page=pages.page, page_size=pages.page_size, status=parse_status
    )


@router.get("/knowledge/{knowledge_id}")
def get_document(
    knowledge_id: uuid.UUID, session: SessionDep, tenant: TenantDep
) -> KnowledgePublic:
    return documents.get_document(session, tenant, knowledge_id)


@router.get("/knowledge/{knowledge_id}/stages")
def get_stages(knowledge_id: uuid.UUID, session: SessionDep, tenant: TenantDep) -> KnowledgeStages:
    """Per-stage progress (parse, embed, index, graph) of the current attempt."""
    return documents.get_stages(session, tenant, knowledge_id)


@router.get("/knowledge/{knowledge_id}/chunks")
def list_chunks(
    knowledge_id: uuid.UUID, session: SessionDep, tenant: TenantDep, pages: PagesDep
) -> Page[ChunkPublic]:
    return documents.list_chunks(
        session, tenant, knowledge_id, page=pages.page, page_size=pages.page_size
    )


@router.get("/chunks/{chunk_id}")
def get_chunk(chunk_id: uuid.UUID, session: SessionDep, tenant: TenantDep) -> ChunkPublic:
    """One chunk by id, as cited by the chat or named by the graph search."""
    return documents.get_chunk(session, tenant, chunk_id)


@router.patch("/chunks/{chunk_id}")
def update_chunk(
    chunk_id: uuid.UUID, body: ChunkUpdate, session: SessionDep, tenant: TenantDep
) -> ChunkPublic:
    """Enable or disable one chunk: search, the chat and graph-search's sources honour it."""
    return documents.update_chunk(session, tenant, chunk_id, body)


@router.post("/knowledge/{knowledge_id}/reparse", status_code=status.HTTP_202_ACCEPTED)
def reparse(
    knowledge_id: uuid.UUID, session: SessionDep, relay: RelayDep, tenant: TenantDep
) -> KnowledgePublic:
    """Parse again from the stored original, as a new attempt (its old graph is removed first)."""
    doc_id, _ = documents.request_reparse(session, tenant, knowledge_id)
    commit_and_kick(session, relay)
    return documents.get_document(session, tenant, doc_id)


@router.patch("/knowledge/{knowledge_id}")
def update_document(
    knowledge_id: uuid.UUID,
    body: KnowledgeUpdate,
    session: SessionDep,
    settings: SettingsDep,
    relay: RelayDep,
    tenant: TenantDep,
) -> KnowledgeUpdated:
    """Set a document's own extraction settings over its base's (null: the base's alone).

    When they change what its graph is extracted with, the answer offers a rebuild of this
    document alone (`graph_rebuild_offered`); `rebuild: true` starts it at once.
    """
    updated = documents.update_document(session, settings, tenant, knowledge_id, body)
    if updated.rebuild_queued:
        commit_and_kick(session, relay)
    return updated


@router.post("/knowledge/{knowledge_id}/cancel")
def cancel(knowledge_id: uuid.UUID, session: SessionDep, tenant: TenantDep) -> KnowledgePublic:
    """Stop a document's processing; its running tasks find it cancelled and stop."""
    return documents.request_cancel(session, tenant, knowledge_id)


@router.delete("/knowledge/{knowledge_id}", status_code=status.HTTP_202_ACCEPTED)
def delete_document(
    knowledge_id: uuid.UUID, session: SessionDep, relay: RelayDep, tenant: TenantDep
) -> dict[str, str]:
    """Hide the document at once; its graph, chunks and file are purged in the background."""
    doc_id = documents.request_delete(session, tenant, knowledge_id)
    commit_and_kick(session, relay)
    return {"id": str(doc_id), "status": "deleting"}
