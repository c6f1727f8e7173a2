"""A knowledge base's rows written straight into PostgreSQL, fast and without any LLM: for the
tests and the bench that delete large bases. Half the chunks are `image_ocr` children of the
other half (`parent_chunk_id`), so a delete follows that foreign key as a real base's does."""

from __future__ import annotations

import uuid

from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope

__all__ = ["bulk_rows", "count_rows"]

_DOCUMENTS = text(
    "INSERT INTO knowledge (id, kb_id, tenant_id, source, file_name, file_type, file_size,"
    " sha256, parse_status, attempt, pending_subtasks_count, progress, stats, page_count,"
    " chunk_count, entity_count, relation_count, failed_chunk_count)"
    " SELECT gen_random_uuid(), kb.id, kb.tenant_id, 'text', 'bulk-' || n || '.txt', 'txt', 0,"
    " md5(kb.id::text || n) || md5(n::text), 'completed', 1, 0, '{}', '{}', 1, :per_document,"
    " 0, 0, 0 FROM knowledge_bases kb CROSS JOIN generate_series(1, :documents) n"
    " WHERE kb.id = :kb"
)
_PARENTS = text(
    "INSERT INTO chunks (id, kb_id, knowledge_id, attempt, seq, chunk_type, content,"
    " start_offset, end_offset, enabled, graph_status)"
    " SELECT gen_random_uuid(), k.kb_id, k.id, 1, 2 * s, 'text', 'bulk text chunk ' || s, 0, 0,"
    " true, 'done' FROM knowledge k CROSS JOIN generate_series(0, :half - 1) s"
    " WHERE k.kb_id = :kb"
)
_CHILDREN = text(
    "INSERT INTO chunks (id, kb_id, knowledge_id, attempt, seq, chunk_type, parent_chunk_id,"
    " content, start_offset, end_offset, enabled, graph_status)"
    " SELECT gen_random_uuid(), kb_id, knowledge_id, 1, seq + 1, 'image_ocr', id,"
    " 'bulk ocr chunk ' || seq, 0, 0, true, 'skipped' FROM chunks"
    " WHERE kb_id = :kb AND chunk_type = 'text'"
)


def bulk_rows(
    sessions: sessionmaker[Session], kb_id: uuid.UUID, documents: int, chunks_per_document: int
) -> None:
    """Add `documents` completed documents of `chunks_per_document` chunks (an even number:
    half text chunks, half their OCR children) to an existing base."""
    params = {"kb": kb_id, "documents": documents, "per_document": chunks_per_document}
    with session_scope(sessions) as session:
        session.execute(_DOCUMENTS, params)
        session.execute(_PARENTS, {"kb": kb_id, "half": chunks_per_document // 2})
        session.execute(_CHILDREN, {"kb": kb_id})


def count_rows(sessions: sessionmaker[Session], kb_id: uuid.UUID) -> tuple[int, int, int]:
    """(bases, documents, chunks) rows left of the base."""
    with session_scope(sessions) as session:
        return (
            int(
                session.scalar(
                    text("SELECT count(*) FROM knowledge_bases WHERE id = :kb"), {"kb": kb_id}
                )
                or 0
            ),
            int(
                session.scalar(
                    text("SELECT count(*) FROM knowledge WHERE kb_id = :kb"), {"kb": kb_id}
                )
                or 0
            ),
            int(
                session.scalar(text("SELECT count(*) FROM chunks WHERE kb_id = :kb"), {"kb": kb_id})
                or 0
            ),
        )
