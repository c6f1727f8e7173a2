"""Closing a session: what it taught goes to the archival memory, linked to its entities.

Steps: the messages logged since the last close; deterministic facts (Q/A, errors, files);
the optional LLM pass (entities, relations, facts about them); near-duplicates dropped by a
read-only probe; then one Neo4j transaction stores the facts, merges the entities and their
weighted relations, writes a MENTIONS edge from each fact to every entity it names and
SAME_AS links to the tenant's knowledge-base entities of the same name. Last, the close is
logged with its report, so running the close again finds nothing new.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from graphrag.db.engine import session_scope
from graphrag.db.models import ChatSession, KnowledgeBase
from graphrag.db.outbox import TaskLease
from graphrag.graph.labels import entity_label
from graphrag.memory.archive import MemoryArchive
from graphrag.memory.context import MemoryContext
from graphrag.memory.dedup import KeptFact, filter_duplicates
from graphrag.memory.entity_graph import MemoryEntityGraph
from graphrag.memory.graph_io import Rows, Statement
from graphrag.memory.llm_extraction import (
    extract_session_graph,
    graph_entities,
    graph_facts,
    graph_relations,
)
from graphrag.memory.mentions import entity_key, names_in_text
from graphrag.memory.recall_log import mark_closed, session_messages
from graphrag.memory.records import (
    LlmStatus,
    MemoryOwner,
    NewFact,
    SessionCloseReport,
    SessionEntity,
    SessionRelation,
)
from graphrag.memory.session_facts import deterministic_facts, files_mentioned, recorded_entities

__all__ = ["close_session"]

log = logging.getLogger(__name__)


def _tenant_kb_labels(db: Session, tenant_id: uuid.UUID) -> list[str]:
    ids = db.scalars(select(KnowledgeBase.id).where(KnowledgeBase.tenant_id == tenant_id)).all()
    return [entity_label(kb_id) for kb_id in ids]


def _merge_entities(groups: Sequence[Sequence[SessionEntity]]) -> list[SessionEntity]:
    """One entity per key: the first spelling, the longest description."""
    merged: dict[str, SessionEntity] = {}
    for group in groups:
        for entity in group:
            key = entity_key(entity.name)
            known = merged.get(key)
            if known is None:
                merged[key] = entity
            elif len(entity.description) > len(known.description):
                merged[key] = known.model_copy(update={"description": entity.description})
    return list(merged.values())


def _unique_texts(facts: Sequence[NewFact]) -> list[NewFact]:
    seen: dict[str, NewFact] = {}
    for fact in facts:
        seen.setdefault(fact.text, fact)
    return list(seen.values())


def _mention_links(
    kept: Sequence[KeptFact], names: Sequence[str]
) -> list[tuple[uuid.UUID, list[str]]]:
    return [(fact_id, names_in_text(names, fact.text)) for fact_id, fact, _ in kept]


def _statements(
    owner: MemoryOwner,
    session_id: uuid.UUID,
    kept: Sequence[KeptFact],
    entities: Sequence[SessionEntity],
    relations: Sequence[SessionRelation],
    links: Sequence[tuple[uuid.UUID, list[str]]],
    kb_labels: Sequence[str],
    now_ms: int,
) -> list[Statement]:
    statements = [
        MemoryArchive.create_statement(owner, kept, now_ms),
        MemoryEntityGraph.merge_entities(owner, session_id, entities, now_ms),
        MemoryEntityGraph.merge_relations(owner, session_id, relations, now_ms),
        MemoryEntityGraph.link_mentions(owner, links),
    ]
    if kb_labels:
        names = [e.name for e in entities]
        statements.append(MemoryEntityGraph.link_same_as(owner, names, kb_labels))
    return statements


def _count(rows: Rows, key: str) -> int:
    return int(rows[0][key]) if rows else 0


def close_session(
    ctx: MemoryContext, owner: MemoryOwner, session_id: uuid.UUID, lease: TaskLease
) -> SessionCloseReport:
    """Move what the session taught into the archival memory; see the module's steps. `lease`
    (the task's row) is renewed by the first read and settled by the last write."""
    with session_scope(ctx.sessions) as db:
        messages = session_messages(db, owner, session_id, since_close=True)
        kb_labels = _tenant_kb_labels(db, owner.tenant_id)
        if messages:
            lease.renew(db)
        else:
            lease.settle(db)
    base = {"tenant_id": owner.tenant_id, "owner": owner.owner, "session_id": session_id}
    if not messages:
        return SessionCloseReport(
            **base,
            messages=0,
            llm_status=LlmStatus.EMPTY,
            llm_detail="no message since the last close",
            closed_at=ctx.clock(),
        )
    settings = ctx.settings
    llm = extract_session_graph(ctx.llm, messages, settings, ctx.extraction)
    facts = _unique_texts(
        deterministic_facts(messages, session_id, settings)
        + graph_facts(llm.graph, session_id, settings)
    )
    vectors = ctx.embedder.embed([f.text for f in facts])
    kept, duplicates = filter_duplicates(
        ctx.archive, owner, facts, vectors, settings.dedup_similarity
    )
    files = [SessionEntity(name=name) for name in files_mentioned(messages, settings)]
    entities = _merge_entities(
        [recorded_entities(messages), files, graph_entities(llm.graph, settings)]
    )
    fact_text = "\n".join(fact.text for _, fact, _ in kept)
    known = ctx.entities.known_names_in(owner, fact_text, capped=False) if kept else []
    links = _mention_links(kept, [e.name for e in entities] + known)
    now = ctx.clock()
    relations = graph_relations(llm.graph)
    statements = _statements(owner, session_id, kept, entities, relations, links, kb_labels, now)
    results = ctx.graph_io().write_all(statements)
    report = SessionCloseReport(
        **base,
        messages=len(messages),
        candidates=len(facts),
        stored=_count(results[0], "facts"),
        duplicates=duplicates,
        entities=_count(results[1], "entities"),
        relations=_count(results[2], "relations"),
        mentions=_count(results[3], "links"),
        same_as=_count(results[4], "links") if len(results) > 4 else 0,
        llm_status=llm.status,
        llm_detail=llm.detail,
        closed_at=now,
    )
    with session_scope(ctx.sessions) as db:
        lease.settle(db)
        if not _lock_live_session(db, owner, session_id):
            # Deleted while this close ran: what was just learnt from it goes too.
            forgotten = ctx.archive.delete_session_facts(owner.tenant_id, session_id)
            log.info(
                "memory session %s deleted during its close: %d facts removed",
                session_id,
                forgotten,
            )
            return report
        mark_closed(db, owner, session_id, report, ctx.clock)
    log.info("memory session closed: %s", report.model_dump(mode="json"))
    return report


def _lock_live_session(db: Session, owner: MemoryOwner, session_id: uuid.UUID) -> bool:
    """Whether the chat session still exists; if so, it cannot be deleted before this
    transaction ends (a key-share lock), so the close's marker never outlives it."""
    found = db.execute(
        select(ChatSession.id)
        .where(ChatSession.id == session_id, ChatSession.tenant_id == owner.tenant_id)
        .with_for_update(key_share=True)
    ).first()
    return found is not None
