"""Graph test data written through the real store, and the document rows its chunks point at."""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.enums import GraphStatus, KnowledgeSource, ParseStatus
from graphrag.db.models import Chunk, Knowledge, KnowledgeBase
from graphrag.graph.labels import entity_label
from graphrag.graph.models import GraphData, GraphNode, GraphRelation
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.settings import Settings
from tests.support.api_helpers import create_kb

__all__ = [
    "GRAPH_ON",
    "GraphKb",
    "add_document",
    "drop_kb_graph",
    "graph",
    "graph_kb",
    "one_entity_in_two_documents",
]

GRAPH_ON = {"indexing": {"graph_enabled": True}, "extract_config": {"enabled": True}}


def graph(
    nodes: Sequence[str | tuple[str, list[str]]] = (),
    relations: Sequence[tuple[str, str, str]] = (),
) -> GraphData:
    """A chunk's graph: nodes by name (or (name, attributes)), relations as (from, type, to)."""
    built = [
        GraphNode(name=n) if isinstance(n, str) else GraphNode(name=n[0], attributes=n[1])
        for n in nodes
    ]
    links = [GraphRelation(node1=a, type=t, node2=b) for a, t, b in relations]
    return GraphData(nodes=built, relations=links)


def add_document(
    sessions: sessionmaker[Session],
    kb_id: uuid.UUID,
    contents: Sequence[str],
    file_name: str | None = None,
) -> tuple[uuid.UUID, list[uuid.UUID]]:
    """A completed text document of the base with one enabled chunk per text (pages 1, 2, ...);
    named `doc-<id>.txt` unless `file_name` is given."""
    doc_id = uuid.uuid4()
    chunk_ids = [uuid.uuid4() for _ in contents]
    body = "\n\n".join(contents)
    with sessions() as session:
        kb = session.get(KnowledgeBase, kb_id)
        assert kb is not None, kb_id
        session.add(
            Knowledge(
                id=doc_id,
                kb_id=kb_id,
                tenant_id=kb.tenant_id,
                source=KnowledgeSource.TEXT,
                file_name=file_name or f"doc-{doc_id.hex[:8]}.txt",
                file_type="txt",
                file_size=len(body),
                sha256=hashlib.sha256(doc_id.bytes).hexdigest(),
                parse_status=ParseStatus.COMPLETED,
                attempt=1,
                chunk_count=len(contents),
            )
        )
        session.flush()
        session.add_all(
            Chunk(
                id=chunk_id,
                kb_id=kb_id,
                knowledge_id=doc_id,
                attempt=1,
                seq=seq,
                chunk_type="text",
                content=text,
                page=seq + 1,
                enabled=True,
                graph_status=GraphStatus.DONE,
            )
            for seq, (chunk_id, text) in enumerate(zip(chunk_ids, contents, strict=True))
        )
        session.commit()
    return doc_id, chunk_ids


_CLEANUP_TRIES = 5
_CLEANUP_PAUSE_S = 0.5


def drop_kb_graph(store: Neo4jGraphStore, driver: Driver, kb_id: uuid.UUID) -> None:
    """Delete a test base's nodes and its name index; fail if a node of it is left.

    A document purge of the session's worker may still be deleting some of these nodes at the
    same time, so the delete is repeated until nothing is left (a few tries at most).
    """
    label = entity_label(kb_id)
    for _ in range(_CLEANUP_TRIES):
        store.delete_knowledge_base(kb_id)
        records, _, _ = driver.execute_query(f"MATCH (n:{label}) RETURN count(n) AS left")
        if records[0]["left"] == 0:
            break
        time.sleep(_CLEANUP_PAUSE_S)
    driver.execute_query(f"DROP INDEX name_{label} IF EXISTS")
    records, _, _ = driver.execute_query(f"MATCH (n:{label}) RETURN count(n) AS left")
    assert records[0]["left"] == 0, kb_id


@dataclass
class GraphKb:
    """A graph-enabled test base: documents go to PostgreSQL, graphs through the real store."""

    id: uuid.UUID
    store: Neo4jGraphStore
    sessions: sessionmaker[Session]

    def document(
        self, *contents: str, file_name: str | None = None
    ) -> tuple[uuid.UUID, list[uuid.UUID]]:
        return add_document(self.sessions, self.id, contents, file_name)


@contextmanager
def graph_kb(
    http: httpx.Client, driver: Driver, settings: Settings, sessions: sessionmaker[Session]
) -> Iterator[GraphKb]:
    """A fresh graph-enabled base of `http`'s tenant; its graph is deleted afterwards."""
    kb_id = uuid.UUID(create_kb(http, **GRAPH_ON)["id"])
    store = Neo4jGraphStore(driver, settings.neo4j)
    yield GraphKb(kb_id, store, sessions)
    drop_kb_graph(store, driver, kb_id)


def one_entity_in_two_documents(kb: GraphKb) -> tuple[uuid.UUID, uuid.UUID]:
    """plant.md and people.txt, both naming Elin Brask, who runs Zorvath Industries in both; only
    plant.md places Zorvath in Tromso, only people.txt has her study in Bergen."""
    plant, (p0,) = kb.document(
        "Elin Brask runs Zorvath Industries in Tromso.", file_name="plant.md"
    )
    people, (q0,) = kb.document(
        "Elin Brask runs Zorvath and studied in Bergen.", file_name="people.txt"
    )
    runs = ("Elin Brask", "runs", "Zorvath Industries")
    kb.store.write_chunk_graph(
        kb.id,
        plant,
        p0,
        graph(
            [("Elin Brask", ["plant director"]), "Zorvath Industries", "Tromso"],
            [runs, ("Zorvath Industries", "located_in", "Tromso")],
        ),
    )
    kb.store.write_chunk_graph(
        kb.id,
        people,
        q0,
        graph(
            [("Elin Brask", ["beekeeper"]), "Zorvath Industries", "Bergen"],
            [runs, ("Elin Brask", "studied_in", "Bergen")],
        ),
    )
    return plant, people
