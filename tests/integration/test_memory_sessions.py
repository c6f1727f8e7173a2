"""Session close and session-start recall on real PostgreSQL, Neo4j and the scripted LLM."""

from __future__ import annotations

import uuid

import pytest
from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import MessageRole
from graphrag.llm.client import LlmClient
from graphrag.memory.chat_memory import ChatMemory
from graphrag.memory.context import MemoryContext
from graphrag.memory.core_memory import write_section
from graphrag.memory.idle_sweep import sessions_due_for_close
from graphrag.memory.mentions import names_in_text
from graphrag.memory.recall import RecallPhase, session_start_recall
from graphrag.memory.recall_log import (
    RecallEntry,
    append_entries,
    last_close_report,
    record_exchange,
)
from graphrag.memory.records import LlmStatus, MemoryOwner
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.memory_helpers import (
    ManualClock,
    fact_rows,
    memory_context,
    mentions,
    new_chat_session,
)
from tests.support.task_leases import close_session

pytestmark = pytest.mark.integration

ORION_GRAPH = {
    "nodes": [
        {"name": "Project Orion", "attributes": ["stores its data in PostgreSQL 16"]},
        {"name": "PostgreSQL", "attributes": []},
    ],
    "relations": [{"node1": "Project Orion", "node2": "PostgreSQL", "type": "uses"}],
}


@pytest.fixture
def ctx(
    settings: Settings,
    session_factory: sessionmaker[Session],
    neo4j_driver: Driver,
    fresh_scripted_llm: ScriptedLlmServer,
    clock: ManualClock,
) -> MemoryContext:
    fresh_scripted_llm.set_rules(
        [
            {
                "name": "orion",
                "match": {"user": {"contains": "Orion"}},
                "reply": {"content": ORION_GRAPH},
            }
        ]
    )
    return memory_context(
        settings, session_factory, neo4j_driver, clock=clock, llm=LlmClient(settings.llm)
    )


def _exchange(
    ctx: MemoryContext, owner: MemoryOwner, session_id: uuid.UUID, q: str, a: str, names: list[str]
) -> None:
    with session_scope(ctx.sessions) as db:
        record_exchange(db, owner, session_id, q, a, names, clock=ctx.clock)


def _orion_session(ctx: MemoryContext, owner: MemoryOwner) -> uuid.UUID:
    session_id = new_chat_session(ctx.sessions, owner)
    _exchange(
        ctx,
        owner,
        session_id,
        "Which database does Project Orion use?",
        "Project Orion keeps everything in PostgreSQL 16, see docs/orion/schema.sql.",
        ["Project Orion"],
    )
    return session_id


def test_fact_of_session_one_is_recalled_at_start_of_session_two(
    ctx: MemoryContext, owner: MemoryOwner, clock: ManualClock, neo4j_driver: Driver
) -> None:
    first = close_session(ctx, owner, _orion_session(ctx, owner))
    assert first.llm_status == LlmStatus.OK
    assert first.stored >= 3 and first.relations == 1 and first.mentions > 0

    clock.advance(days=2)
    new_chat_session(ctx.sessions, owner)
    recall = session_start_recall(ctx, owner, "Remind me: what database runs Project Orion?")
    texts = [r.scored.fact.text for r in recall.facts]
    assert any("PostgreSQL 16" in t for t in texts), texts
    assert recall.entities == ["Project Orion"]
    assert len({r.scored.fact.id for r in recall.facts}) == len(recall.facts)
    assert {r.phase for r in recall.facts} <= set(RecallPhase)

    # The facts handed out count as accessed, once, at the (moved) clock's time.
    rows = fact_rows(neo4j_driver, owner)
    for recalled in recall.facts:
        row = rows[str(recalled.scored.fact.id)]
        assert (row["access_count"], row["last_access"]) == (1, clock())


def test_every_stored_fact_naming_an_entity_has_its_mentions_edge(
    ctx: MemoryContext, owner: MemoryOwner, neo4j_driver: Driver
) -> None:
    close_session(ctx, owner, _orion_session(ctx, owner))
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (e:MemoryEntity {tenant: $tenant, owner: $owner}) RETURN e.name AS name",
        {"tenant": str(owner.tenant_id), "owner": owner.owner},
    )
    entity_names = [r["name"] for r in records]
    assert {"Project Orion", "PostgreSQL", "docs/orion/schema.sql"} <= set(entity_names)
    edges = mentions(neo4j_driver, owner)
    expected = {
        (fact_id, name)
        for fact_id, row in fact_rows(neo4j_driver, owner).items()
        for name in names_in_text(entity_names, row["text"])
    }
    assert expected and expected <= edges


def test_relation_weight_grows_with_each_occurrence(
    ctx: MemoryContext, owner: MemoryOwner, neo4j_driver: Driver
) -> None:
    close_session(ctx, owner, _orion_session(ctx, owner))
    second = new_chat_session(ctx.sessions, owner)
    _exchange(ctx, owner, second, "Is Project Orion still on PostgreSQL?", "Yes.", [])
    close_session(ctx, owner, second)
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (:MemoryEntity {tenant: $tenant, owner: $owner, key: 'project orion'})"
        "-[r:RELATES]->(:MemoryEntity {key: 'postgresql'}) RETURN r.type AS type, r.weight AS w",
        {"tenant": str(owner.tenant_id), "owner": owner.owner},
    )
    assert [(r["type"], r["w"]) for r in records] == [("uses", 2)]


def test_near_duplicate_is_not_stored_twice_and_probe_reads_only(
    ctx: MemoryContext, owner: MemoryOwner, neo4j_driver: Driver
) -> None:
    close_session(ctx, owner, _orion_session(ctx, owner))
    before = fact_rows(neo4j_driver, owner)
    again = new_chat_session(ctx.sessions, owner)
    _exchange(
        ctx,
        owner,
        again,
        "Which database does Project Orion use ?",
        "Project Orion keeps everything in PostgreSQL 16, see docs/orion/schema.sql",
        [],
    )
    report = close_session(ctx, owner, again)
    assert report.duplicates == report.candidates >= 3 and report.stored == 0
    after = fact_rows(neo4j_driver, owner)
    assert after == before  # nothing added, and the probe moved no counter nor time


def test_closing_twice_adds_nothing(
    ctx: MemoryContext, owner: MemoryOwner, neo4j_driver: Driver
) -> None:
    session_id = _orion_session(ctx, owner)
    close_session(ctx, owner, session_id)
    facts = fact_rows(neo4j_driver, owner)
    again = close_session(ctx, owner, session_id)
    assert again.messages == 0 and again.stored == 0
    assert fact_rows(neo4j_driver, owner) == facts


def test_llm_down_is_reported_and_deterministic_facts_still_stored(
    settings: Settings,
    session_factory: sessionmaker[Session],
    neo4j_driver: Driver,
    owner: MemoryOwner,
    clock: ManualClock,
) -> None:
    down = settings.llm.model_copy(update={"base_url": "http://127.0.0.1:9/v1", "timeout_s": 2.0})
    ctx = memory_context(settings, session_factory, neo4j_driver, clock=clock, llm=LlmClient(down))
    session_id = _orion_session(ctx, owner)
    report = close_session(ctx, owner, session_id)
    assert report.llm_status == LlmStatus.UNAVAILABLE and report.llm_detail
    assert report.stored >= 2  # the Q/A and the files facts
    with session_scope(session_factory) as db:
        stored = last_close_report(db, owner, session_id)
    assert stored is not None and stored.llm_status == LlmStatus.UNAVAILABLE
    assert {row["kind"] for row in fact_rows(neo4j_driver, owner).values()} == {"qa", "files"}


def test_prose_answer_is_reported_unparsed(
    ctx: MemoryContext, owner: MemoryOwner, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    fresh_scripted_llm.set_rules(
        [
            {
                "match": {"user": {"contains": "Vega"}},
                "reply": {"content": "I cannot help with that."},
            }
        ]
    )
    session_id = new_chat_session(ctx.sessions, owner)
    _exchange(ctx, owner, session_id, "What is Vega?", "A star in Lyra.", ["Vega"])
    report = close_session(ctx, owner, session_id)
    assert report.llm_status == LlmStatus.UNPARSED and "prose" in report.llm_detail
    assert report.stored == 1


def test_errors_and_tool_data_become_facts(
    ctx: MemoryContext, owner: MemoryOwner, neo4j_driver: Driver
) -> None:
    session_id = new_chat_session(ctx.sessions, owner)
    with session_scope(ctx.sessions) as db:
        append_entries(
            db,
            owner,
            session_id,
            [
                RecallEntry(role=MessageRole.USER, content="Load the sales sheet"),
                RecallEntry(
                    role=MessageRole.ASSISTANT,
                    tool_data={
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "read", "arguments": "{}"},
                            }
                        ]
                    },
                ),
                RecallEntry(
                    role=MessageRole.TOOL,
                    content="permission denied on /srv/sales.xlsx",
                    tool_data={"tool_call_id": "c1", "name": "read", "is_error": True},
                ),
                RecallEntry(role=MessageRole.ASSISTANT, content="I could not open sales.xlsx."),
            ],
            ctx.clock,
        )
    report = close_session(ctx, owner, session_id)
    kinds = sorted(row["kind"] for row in fact_rows(neo4j_driver, owner).values())
    assert kinds == ["error", "files", "qa"], report


def test_idle_sessions_are_due_after_the_timeout_only(
    ctx: MemoryContext, owner: MemoryOwner, clock: ManualClock
) -> None:
    session_id = _orion_session(ctx, owner)
    idle = ctx.settings.idle_close_s

    def due() -> bool:
        with session_scope(ctx.sessions) as db:
            return (owner, session_id) in sessions_due_for_close(db, ctx.settings, clock)

    clock.advance(seconds=idle - 1)
    assert not due()
    clock.advance(seconds=2)
    assert due()
    close_session(ctx, owner, session_id)
    assert not due()


def test_chat_memory_port_renders_core_memory_and_recalled_facts(
    ctx: MemoryContext, owner: MemoryOwner
) -> None:
    memory = ChatMemory(ctx)
    session_id = new_chat_session(ctx.sessions, owner)
    with session_scope(ctx.sessions) as db:
        write_section(db, owner, "identity", "The user is Ada, a data engineer.", ctx.settings)
        memory.record_exchange(
            db,
            owner.tenant_id,
            owner.owner,
            session_id,
            "Which database does Project Orion use?",
            "Project Orion keeps everything in PostgreSQL 16.",
            ["Project Orion"],
        )
    close_session(ctx, owner, session_id)
    block = memory.recall(owner.tenant_id, owner.owner, "What does Project Orion run on?")
    assert block.startswith("# Core memory\n## identity\nThe user is Ada, a data engineer.")
    assert "PostgreSQL 16" in block.split("# Things remembered from earlier sessions", 1)[1]
