"""Loading the chat benchmark's generated base: PostgreSQL rows in bulk, the graph by UNWIND.

PostgreSQL: the tenant, the base (vector, keyword and graph on), its documents and a chat
session through the ORM; the chunks by one binary COPY. The chunk table's HNSW and GIN indexes
are dropped before the COPY and re-created after it from their own definitions (read from
`pg_indexes`, so they are exactly the migration's): a bulk build is much faster than 50k
one-by-one inserts and gives the same index. Then VACUUM ANALYZE, as autovacuum would soon after.

Neo4j: nodes shaped as `Neo4jGraphStore.write_chunk_graph` writes them (labels `GraphEntity`,
`ENTITY<kb>`, `ENTITY<document>`; `name`, `kg`, `attributes`, `chunks`; relations typed by data
with their `chunks`), created in batches of `UNWIND` rows (the names are distinct per document,
so CREATE gives what the store's merges would).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import psycopg
from pgvector.psycopg import register_vector
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

from bench.chat_corpus import Corpus, FloatMatrix
from bench.harness import COUNT_UNDER_LABEL
from graphrag.db.engine import session_scope
from graphrag.db.enums import GraphStatus, KnowledgeSource, ParseStatus
from graphrag.db.models import ChatSession, Knowledge, KnowledgeBase, Tenant
from graphrag.extraction.models import ExtractConfig
from graphrag.graph.labels import ENTITY_KEY_LABEL, entity_label
from graphrag.graph.names import name_key
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.kb.schemas import IndexingStrategy

__all__ = ["BenchKb", "copy_chunks", "create_rows", "drop_graph", "write_graph"]

T = TypeVar("T")

_BULK_INDEXES = ("ix_chunks_embedding_hnsw", "ix_chunks_tsv")
# Session-local, for the index builds only: the HNSW graph of 50k x 384 floats must fit in
# memory to build fast, and the build may outlast the engine's statement timeout.
_BUILD_MEMORY = "1GB"
_GRAPH_BATCH = 2000  # UNWIND rows per write transaction
_INDEX_WAIT_S = 120

# Each entity is linked to the base-level node of its name key, as the graph store does. Labels
# and relation types go in as data (Neo4j 5.26 `$(...)`): the server loads only the APOC
# procedures the backend itself calls (deploy/neo4j/neo4j.conf).
CREATE_ENTITIES = """
UNWIND $rows AS row
CREATE (node:$(row.labels))
SET node = row.props
MERGE (c:BaseEntity {kb: row.kb, key: row.props.key})
CREATE (node)-[:INSTANCE_OF]->(c)
RETURN count(node) AS nodes
"""
CREATE_RELATIONS = """
UNWIND $rows AS row
MATCH (a:GraphEntity {kg: row.kg, name: row.source})
MATCH (b:GraphEntity {kg: row.kg, name: row.target})
CREATE (a)-[rel:$(row.type) {chunks: row.chunks}]->(b)
RETURN count(rel) AS relations
"""
AWAIT_INDEXES = "CALL db.awaitIndexes($timeout_s)"
DROP_NAME_INDEX = "DROP INDEX name_{label} IF EXISTS"


@dataclass(frozen=True)
class BenchKb:
    """The ids of the benchmark's tenant, base and chat session (fixed first, for the clean-up)."""

    tenant_id: uuid.UUID
    kb_id: uuid.UUID
    session_id: uuid.UUID


def create_rows(sessions: sessionmaker[Session], corpus: Corpus, ids: BenchKb) -> None:
    """Tenant, graph-enabled base, completed documents and an empty chat session."""
    sizes = [0] * len(corpus.doc_ids)
    for chunk in corpus.chunks:
        sizes[chunk.doc] += len(chunk.content)
    with session_scope(sessions) as session:
        session.add(Tenant(id=ids.tenant_id, name="bench-chat"))
        session.flush()
        session.add(
            KnowledgeBase(
                id=ids.kb_id,
                tenant_id=ids.tenant_id,
                name="bench-chat",
                indexing=IndexingStrategy(graph_enabled=True).model_dump(mode="json"),
                extract_config=ExtractConfig(enabled=True).model_dump(mode="json"),
                embedding_model="all-MiniLM-L6-v2",
                chat_model="none",
            )
        )
        session.flush()
        for index, doc_id in enumerate(corpus.doc_ids):
            session.add(
                Knowledge(
                    id=doc_id,
                    kb_id=ids.kb_id,
                    tenant_id=ids.tenant_id,
                    source=KnowledgeSource.TEXT,
                    file_name=f"report-{index:03d}.txt",
                    file_type="txt",
                    file_size=sizes[index],
                    sha256=hashlib.sha256(str(doc_id).encode()).hexdigest(),
                    parse_status=ParseStatus.COMPLETED,
                    attempt=1,
                    chunk_count=sum(1 for c in corpus.chunks if c.doc == index),
                )
            )
        session.add(
            ChatSession(
                id=ids.session_id, tenant_id=ids.tenant_id, owner="bench", kb_ids=[str(ids.kb_id)]
            )
        )


_COPY_CHUNKS = (
    "COPY chunks (id, kb_id, knowledge_id, attempt, seq, chunk_type, content, page, "
    "start_offset, end_offset, enabled, embedding, graph_status, entity_keys) "
    "FROM STDIN (FORMAT BINARY)"
)
_COPY_TYPES = [
    "uuid", "uuid", "uuid", "int4", "int4", "varchar", "text", "int4",
    "int4", "int4", "bool", "vector", "varchar", "text[]",
]  # fmt: skip


def copy_chunks(engine: Engine, kb_id: uuid.UUID, corpus: Corpus, vectors: FloatMatrix) -> None:
    """Every chunk by one binary COPY, between dropping and re-creating the bulk indexes."""
    with engine.connect() as conn:
        definitions = conn.execute(
            text("SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(:names)"),
            {"names": list(_BULK_INDEXES)},
        ).all()
        if len(definitions) != len(_BULK_INDEXES):
            raise SystemExit(f"expected indexes {_BULK_INDEXES}, found {definitions}")
        for name, _ in definitions:
            conn.execute(text(f'DROP INDEX "{name}"'))
        raw = cast("psycopg.Connection[Any]", conn.connection.driver_connection)
        register_vector(raw)
        # The keys a worker records on a chunk as it writes the chunk's graph.
        keys: dict[str, list[str]] = {}
        for entity in corpus.entities:
            for chunk_id in entity.chunks:
                keys.setdefault(str(chunk_id), []).append(name_key(entity.name))
        with raw.cursor() as cursor, cursor.copy(_COPY_CHUNKS) as copy:
            copy.set_types(_COPY_TYPES)
            for chunk, vector in zip(corpus.chunks, vectors, strict=True):
                copy.write_row(
                    (
                        chunk.id, kb_id, corpus.doc_ids[chunk.doc], 1, chunk.seq, "text",
                        chunk.content, None, 0, len(chunk.content), True, vector,
                        GraphStatus.DONE.value, keys.get(str(chunk.id), []),
                    )
                )  # fmt: skip
        conn.execute(text(f"SET maintenance_work_mem = '{_BUILD_MEMORY}'"))
        conn.execute(text("SET statement_timeout = 0"))
        for _, definition in definitions:
            conn.execute(text(definition))
        conn.commit()
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        # As autovacuum would soon after a bulk load: statistics for the planner and a visibility
        # map for index-only scans (without it each one visits the heap for every row).
        conn.execute(text("VACUUM ANALYZE"))


def _batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _write(store: Neo4jGraphStore, query: str, rows: list[dict[str, Any]], key: str) -> int:
    written = 0
    for batch in _batches(rows, _GRAPH_BATCH):
        records, _, _ = store.driver.execute_query(
            query, rows=list(batch), database_=store.settings.database
        )
        written += int(records[0][key])
    return written


def write_graph(store: Neo4jGraphStore, kb_id: uuid.UUID, corpus: Corpus) -> tuple[int, int]:
    """The base's entities and relations, after its name index (as a new base gets it)."""
    store.ensure_schema()
    store.ensure_kb_indexes(kb_id)
    store.driver.execute_query(
        AWAIT_INDEXES, timeout_s=_INDEX_WAIT_S, database_=store.settings.database
    )
    kb_label = entity_label(kb_id)
    docs = [str(d) for d in corpus.doc_ids]
    doc_labels = [entity_label(d) for d in corpus.doc_ids]
    nodes = [
        {
            "labels": [ENTITY_KEY_LABEL, kb_label, doc_labels[e.doc]],
            "kb": str(kb_id),
            "props": {
                "name": e.name,
                "key": name_key(e.name),
                "kg": docs[e.doc],
                "attributes": [f"kind: {e.kind}"],
                "chunks": e.chunks,
            },
        }
        for e in corpus.entities
    ]
    relations = [
        {"kg": docs[r.doc], "source": r.source, "target": r.target, "type": r.type,
         "chunks": r.chunks}
        for r in corpus.relations
    ]  # fmt: skip
    return (
        _write(store, CREATE_ENTITIES, nodes, "nodes"),
        _write(store, CREATE_RELATIONS, relations, "relations"),
    )


def drop_graph(store: Neo4jGraphStore, kb_id: uuid.UUID) -> tuple[int, int]:
    """Every node of the base (batched, with its relations) and the base's name index.

    Returns the nodes removed and the nodes still under the base's label afterwards (0).
    """
    removed = store.delete_knowledge_base(kb_id)
    label = entity_label(kb_id)
    database = store.settings.database
    store.driver.execute_query(DROP_NAME_INDEX.format(label=label), database_=database)
    records, _, _ = store.driver.execute_query(
        COUNT_UNDER_LABEL.format(label=label), database_=database
    )
    return removed, int(records[0]["nodes"])
