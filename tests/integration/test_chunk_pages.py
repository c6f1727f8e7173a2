"""A chunk's settlement rewrites its row in the row's own page (an in-place update) against real
PostgreSQL: a version written to another page would give every index of the table a second
entry, the chunk's HNSW graph among them."""

from __future__ import annotations

import random
import string
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import GraphStatus
from graphrag.db.lifecycle import finish_chunk_subtask
from graphrag.extraction.output_parser import OutputKind, ParseOutcome
from graphrag.extraction.trace import chunk_trace
from graphrag.graph.models import GraphData, GraphNode, GraphRelation
from graphrag.settings import SCHEMA_EMBEDDING_DIM, Settings
from tests.support.document_rows import finalizing_document
from tests.support.isolated_worker import own_database

pytestmark = pytest.mark.integration

# A document of this many chunks is inserted in one transaction, as a parse writes it.
_CHUNKS = 24


@pytest.fixture()
def sessions(
    settings: Settings, settings_env: dict[str, str], services_env: dict[str, str]
) -> Iterator[sessionmaker[Session]]:
    """A database of its own: no other test's rows share the pages."""
    with own_database(services_env["DATABASE_URL"], settings, settings_env) as (_, _, made):
        yield made


def _document(
    sessions: sessionmaker[Session], settings: Settings
) -> tuple[uuid.UUID, list[uuid.UUID]]:
    """A document waiting on its chunks' graph work, its chunks of a quarter of the configured
    size to all of it, each with a vector: (document, chunks)."""
    rng = random.Random(7)
    # Words of random letters: text that compresses about as little as prose does.
    words = [
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 10))) for _ in range(2000)
    ]
    # A chunker cuts at paragraphs: chunks run from a quarter of the size to all of it.
    full = settings.ingest.chunk_size
    sizes = [rng.randint(full // 4, full) for _ in range(_CHUNKS)]
    contents = [" ".join(rng.choice(words) for _ in range(n // 4))[:n] for n in sizes]
    vectors = [[rng.uniform(-1.0, 1.0) for _ in range(SCHEMA_EMBEDDING_DIM)] for _ in sizes]
    return finalizing_document(sessions, contents, vectors)


def _pages(sessions: sessionmaker[Session], chunks: list[uuid.UUID]) -> dict[uuid.UUID, int]:
    """Each chunk row's page (the block of its current version)."""
    query = text("SELECT id, (ctid::text::point)[0]::bigint FROM chunks WHERE id = ANY(:ids)")
    with session_scope(sessions) as session:
        return {row[0]: int(row[1]) for row in session.execute(query, {"ids": chunks})}


def _outcome(seq: int) -> ParseOutcome:
    """An extraction's reading of one chunk: a handful of entities and relations."""
    names = [f"Northwind Robotics division {seq}-{i}" for i in range(6)]
    nodes = [GraphNode(name=name, attributes=["a robotics maker in Lyon"]) for name in names]
    relations = [
        GraphRelation(node1=names[i], node2=names[i + 1], type="SUPPLIES") for i in range(5)
    ]
    return ParseOutcome(data=GraphData(nodes=nodes, relations=relations), kind=OutputKind.OK)


def _settle_all(
    sessions: sessionmaker[Session], doc: uuid.UUID, chunks: list[uuid.UUID], settings: Settings
) -> None:
    """Settle every chunk as its task does, each in its own transaction, with the keys, drops
    and trace of a real extraction's reading."""
    for seq, chunk in enumerate(chunks):
        outcome = _outcome(seq)
        with session_scope(sessions) as session:
            finish_chunk_subtask(
                session,
                doc,
                1,
                chunk,
                GraphStatus.DONE,
                entity_keys=outcome.data.entity_keys(),
                graph_drops={"entities.placeholder": 1, "relations.dangling": 2},
                trace=chunk_trace(outcome, "stop", settings.extraction.trace_sample),
            )


def test_every_settlement_of_a_document_stays_in_its_page(
    sessions: sessionmaker[Session], settings: Settings
) -> None:
    doc, chunks = _document(sessions, settings)
    before = _pages(sessions, chunks)
    _settle_all(sessions, doc, chunks, settings)
    with session_scope(sessions) as session:
        done = session.execute(
            text("SELECT count(*) FROM chunks WHERE knowledge_id = :d AND graph_status = 'done'"),
            {"d": doc},
        ).scalar_one()
    assert done == _CHUNKS
    assert _pages(sessions, chunks) == before
