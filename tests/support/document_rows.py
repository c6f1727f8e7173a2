"""Rows of a base, its tenant and a document, written straight to PostgreSQL for the tests of
what reads and settles them."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import GraphStatus, KnowledgeSource, ParseStatus
from graphrag.db.models import Chunk, Knowledge, KnowledgeBase, Tenant

__all__ = ["finalizing_document", "pending_document"]


def pending_document(
    sessions: sessionmaker[Session], sibling_of: uuid.UUID | None = None
) -> uuid.UUID:
    """A pending document row (with its base and tenant, or those of `sibling_of`), written
    straight to the tables."""
    doc = uuid.uuid4()
    with session_scope(sessions) as session:
        if sibling_of is None:
            tenant, kb = uuid.uuid4(), uuid.uuid4()
            session.add(Tenant(id=tenant, name=f"t-{tenant.hex[:8]}"))
            session.flush()
            base = KnowledgeBase(
                id=kb, tenant_id=tenant, name="kb", embedding_model="m", chat_model="m"
            )
            session.add(base)
            session.flush()
        else:
            sibling = session.get(Knowledge, sibling_of)
            assert sibling is not None
            tenant, kb = sibling.tenant_id, sibling.kb_id
        session.add(
            Knowledge(
                id=doc,
                kb_id=kb,
                tenant_id=tenant,
                source=KnowledgeSource.TEXT,
                file_name="a.md",
                file_type="markdown",
                file_size=1,
                sha256=doc.hex,
                parse_status=ParseStatus.PENDING,
                attempt=1,
            )
        )
    return doc


def finalizing_document(
    sessions: sessionmaker[Session],
    contents: Sequence[str],
    vectors: Sequence[list[float]] | None = None,
) -> tuple[uuid.UUID, list[uuid.UUID]]:
    """A document waiting on the graph work of its chunks, one pending chunk per text of
    `contents` (with its vector of `vectors`), written in one transaction as a parse writes
    them: (document, chunks)."""
    doc, chunks = pending_document(sessions), [uuid.uuid4() for _ in contents]
    with session_scope(sessions) as session:
        row = session.get(Knowledge, doc)
        assert row is not None
        row.parse_status, row.pending_subtasks_count = ParseStatus.FINALIZING, len(chunks)
        for seq, (chunk, content) in enumerate(zip(chunks, contents, strict=True)):
            session.add(
                Chunk(
                    id=chunk,
                    kb_id=row.kb_id,
                    knowledge_id=doc,
                    attempt=1,
                    seq=seq,
                    chunk_type="text",
                    content=content,
                    embedding=None if vectors is None else vectors[seq],
                    graph_status=GraphStatus.PENDING,
                )
            )
    return doc, chunks
