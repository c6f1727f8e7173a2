"""Deleting a large knowledge base: the purge's committed batches against one DELETE per table.

    XDG_RUNTIME_DIR=/tmp .venv/bin/python bench/kb_delete.py [--documents 50]

A fresh database gets a base of `--documents` documents of `--chunks-per-document` chunks (100k
by default), its rows inserted directly (no parse, no embedding, no LLM); half the chunks are
`image_ocr` children of the other half, so the delete follows `chunks.parent_chunk_id` as a real
base's does. The candidate is `purge_knowledge_base` (graph off: rows and files only), deleting
in batches of `ingest.purge_batch_rows`, each committed; the baseline deletes the same rows of a
second base of the same size with one statement per table. Both run on the migrated schema, with
every foreign key indexed. Above 1: what the batches (and their commits) cost.
"""

from __future__ import annotations

import argparse
import os
import uuid

from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from bench.harness import print_header, print_ratio, services_env, timed
from graphrag.db.engine import make_engine, make_session_factory, session_scope
from graphrag.db.migrate import upgrade_to_head
from graphrag.db.outbox import TaskLease, delete_knowledge_base
from graphrag.graph.store import DisabledGraphStore
from graphrag.ingest.purge import purge_knowledge_base
from graphrag.kb.schemas import KnowledgeBaseCreate
from graphrag.kb.service import create_kb
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant
from tests.support.bulk_base import bulk_rows, count_rows
from tests.support.isolated_worker import core_context
from tests.support.services import create_database, drop_database

_ONE_STATEMENT = (
    "DELETE FROM chunks WHERE kb_id = :kb",
    "DELETE FROM knowledge WHERE kb_id = :kb",
    "DELETE FROM knowledge_bases WHERE id = :kb",
)


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=50)
    parser.add_argument("--chunks-per-document", type=int, default=2000, help="an even number")
    return parser.parse_args()


def _base(
    settings: Settings, sessions: sessionmaker[Session], args: argparse.Namespace
) -> uuid.UUID:
    """A base of the asked size, already marked `deleting` (what the DELETE route does)."""
    with session_scope(sessions) as session:
        tenant = ensure_tenant(session, settings.api.default_tenant)
        create = KnowledgeBaseCreate(name=f"bench-{uuid.uuid4().hex[:8]}")
        kb_id = create_kb(session, settings, DisabledGraphStore(), tenant, create).id
    bulk_rows(sessions, kb_id, args.documents, args.chunks_per_document)
    with session_scope(sessions) as session:
        session.execute(
            text("UPDATE knowledge_bases SET status = 'deleting' WHERE id = :kb"), {"kb": kb_id}
        )
        session.execute(
            text("UPDATE knowledge SET parse_status = 'deleting' WHERE kb_id = :kb"), {"kb": kb_id}
        )
        session.execute(text("ANALYZE chunks"))
    return kb_id


def _one_statement(sessions: sessionmaker[Session], kb_id: uuid.UUID) -> None:
    with session_scope(sessions) as session:
        session.execute(text("SET LOCAL statement_timeout = 0"))  # the baseline may take long
        for statement in _ONE_STATEMENT:
            session.execute(text(statement), {"kb": kb_id})


def run(settings: Settings, args: argparse.Namespace) -> None:
    upgrade_to_head(settings)
    engine = make_engine(settings)
    sessions = make_session_factory(engine)
    try:
        ctx = core_context(settings, sessions, DisabledGraphStore())
        chunks = args.documents * args.chunks_per_document
        batched_kb = _base(settings, sessions, args)
        lease = TaskLease.of(delete_knowledge_base(batched_kb))
        _, batched_s = timed(lambda: purge_knowledge_base(ctx, batched_kb, lease))
        plain_kb = _base(settings, sessions, args)
        _, plain_s = timed(lambda: _one_statement(sessions, plain_kb))
        left = count_rows(sessions, batched_kb), count_rows(sessions, plain_kb)
        detail = (
            f"chunks={chunks} batch_rows={settings.ingest.purge_batch_rows} "
            f"batched={batched_s:.2f}s one_statement={plain_s:.2f}s "
            f"batched_chunks_per_s={chunks / batched_s:.0f} rows_left={left}"
        )
        print_ratio("kb_delete_s", "batched", "one_statement", batched_s / plain_s, detail)
    finally:
        engine.dispose()


def main() -> None:
    args = _parse()
    print_header("kb_delete", vars(args))
    env = services_env()
    database_url = create_database(env["DATABASE_URL"], "graphrag_bench")
    try:
        os.environ.update({**env, "DATABASE_URL": database_url})
        run(Settings(), args)  # Settings read the YAML and the environment set just above
    finally:
        drop_database(database_url)
        print("# cleanup: database dropped (no file was stored)")


if __name__ == "__main__":
    main()
