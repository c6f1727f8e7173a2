"""Deterministic parts of the memory: entity names in text, session facts, transcripts."""

from __future__ import annotations

import uuid

import pytest

from graphrag.db.enums import MessageRole
from graphrag.memory import cypher
from graphrag.memory.llm_extraction import transcript
from graphrag.memory.mentions import entity_key, names_in_text
from graphrag.memory.recall_log import RecallEntry
from graphrag.memory.records import FactKind
from graphrag.memory.session_facts import deterministic_facts, recorded_entities
from graphrag.settings import MemorySettings, get_settings

pytestmark = pytest.mark.unit

SESSION = uuid.UUID("00000000-0000-4000-8000-000000000001")


@pytest.fixture(scope="module")
def memory() -> MemorySettings:
    return get_settings().memory


def _m(role: MessageRole, content: str, **data: object) -> RecallEntry:
    return RecallEntry(role=role, content=content, tool_data=data)


def test_names_are_found_in_the_text_as_whole_words() -> None:
    text = "The AI team moved Project  Orion to PostgreSQL; she said so."
    names = ["ai", "Project Orion", "SQL", "Orion", "Mars", "said so"]
    assert names_in_text(names, text) == ["Project Orion", "said so", "Orion", "ai"]
    assert names_in_text(["the whole message is not a name"], "a short message") == []
    assert entity_key("  Project\n Orion ") == "project orion"


def test_session_facts_pair_questions_with_answers(memory: MemorySettings) -> None:
    messages = [
        _m(MessageRole.USER, "What is in report.pdf?", entities=["Report", " "]),
        _m(MessageRole.ASSISTANT, "", tool_calls=[{"id": "c1"}]),
        _m(MessageRole.TOOL, "Traceback: file not found", tool_call_id="c1"),
        _m(MessageRole.ASSISTANT, "The file could not be read."),
        _m(MessageRole.USER, "Try data/q3.csv then"),
        _m(MessageRole.ASSISTANT, "q3.csv lists 12 orders."),
        _m(MessageRole.SYSTEM, "an error in the system prompt does not count"),
    ]
    facts = deterministic_facts(messages, SESSION, memory)
    by_kind = {kind: [f.text for f in facts if f.kind == kind] for kind in FactKind}
    assert by_kind[FactKind.QA] == [
        "Q: What is in report.pdf? A: The file could not be read.",
        "Q: Try data/q3.csv then A: q3.csv lists 12 orders.",
    ]
    assert by_kind[FactKind.ERROR] == ["Error (tool): Traceback: file not found"]
    assert by_kind[FactKind.FILES] == ["Files mentioned: report.pdf, data/q3.csv, q3.csv"]
    assert all(f.session_id == SESSION for f in facts)
    assert [e.name for e in recorded_entities(messages)] == ["Report"]


def test_long_answers_are_clipped_and_errors_capped(memory: MemorySettings) -> None:
    tight = memory.model_copy(update={"answer_max_chars": 20, "max_errors_per_session": 1})
    messages = [
        _m(MessageRole.USER, "Why?"),
        _m(MessageRole.ASSISTANT, "Because " + "very " * 20 + "long."),
        _m(MessageRole.TOOL, "first failure", is_error=True),
        _m(MessageRole.TOOL, "second failure", is_error=True),
    ]
    facts = deterministic_facts(messages, SESSION, tight)
    qa = next(f for f in facts if f.kind == FactKind.QA)
    assert qa.text.endswith("…") and len(qa.text.split(" A: ")[1]) == 20
    assert [f.text for f in facts if f.kind == FactKind.ERROR] == ["Error (tool): first failure"]


def test_transcript_keeps_the_most_recent_whole_messages() -> None:
    messages = [_m(MessageRole.USER, "old " * 10), _m(MessageRole.ASSISTANT, "recent answer")]
    assert transcript(messages, 30) == "Assistant: recent answer"
    assert transcript(messages, 1000).startswith("User: old")
    assert transcript([_m(MessageRole.USER, "x" * 50)], 10) == "x" * 10


def test_queries_are_scoped_and_use_no_calendar_durations() -> None:
    queries = {name: getattr(cypher, name) for name in cypher.__all__ if name.isupper()}
    assert not any("duration" in q for q in queries.values() if isinstance(q, str))
    assert "`vector.similarity_function`: 'cosine'" in cypher.MEMORY_VECTOR_INDEX
    assert "`vector.dimensions`: $dimensions" in cypher.MEMORY_VECTOR_INDEX
    for name in ("NEAREST_BY_INDEX", "NEAREST_BY_SCAN", "TOUCH_FACTS", "ENTITY_IN_TEXT"):
        assert "$tenant" in queries[name] and "$owner" in queries[name], name
    # The message must contain the entity name, not the other way round.
    assert "$text CONTAINS e.key" in cypher.ENTITY_IN_TEXT
