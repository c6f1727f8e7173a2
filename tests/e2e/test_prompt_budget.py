"""A long conversation with big passages and a big memory block: the whole prompt the model
receives stays within `memory.compact_threshold_chars`, and the turn answers (real API, worker,
PostgreSQL, Neo4j; the scripted model records the prompt)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import MessageRole
from graphrag.db.models import Message
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb, upload, wait_terminal
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

ANSWER = "The cranes lift containers [1]."
QUESTION = "What do the Quillon harbour cranes lift?"
PARAGRAPH = "Quillon harbour cranes lift containers and steel coils for the northern quays. " * 18
PARAGRAPHS = 10
PAIRS = 18  # earlier turns of the session
USER_CHARS, ASSISTANT_CHARS = 1000, 1100
CORE_CHARS = 6000


def _store_history(sessions: sessionmaker[Session], session_id: str) -> int:
    """Earlier turns of the session, oldest first; their characters."""
    start = datetime.now(UTC) - timedelta(hours=1)
    chars = 0
    with session_scope(sessions) as db:
        for i in range(PAIRS * 2):
            role = MessageRole.USER if i % 2 == 0 else MessageRole.ASSISTANT
            size = USER_CHARS if role is MessageRole.USER else ASSISTANT_CHARS
            content = (f"turn {i} " + "words of an earlier exchange " * 60)[:size]
            chars += len(content)
            db.add(
                Message(
                    id=uuid.uuid4(),
                    session_id=uuid.UUID(session_id),
                    role=role,
                    content=content,
                    completed=True,
                    created_at=start + timedelta(seconds=i),
                )
            )
    return chars


def _long_session(
    http: httpx.Client, session_factory: sessionmaker[Session]
) -> tuple[dict[str, Any], str, int]:
    """A base of ten long paragraphs, an owner with a big core memory, and a session of
    theirs with a long history: (session, core memory text, history characters)."""
    kb = create_kb(http, chunking={"chunk_size": 1500, "chunk_overlap": 0, "separators": ["\n\n"]})
    text = "\n\n".join(f"P{n}. {PARAGRAPH}" for n in range(PARAGRAPHS)) + f"\n\n{uuid.uuid4()}"
    doc = upload(http, kb["id"], "cranes.md", text.encode()).json()
    assert wait_terminal(http, doc["id"])["parse_status"] == "completed"
    owner = f"owner-{uuid.uuid4().hex[:8]}"
    core = ("The user runs the Quillon harbour night shift. " * 200)[:CORE_CHARS]
    put = http.put("/api/v1/memory/core/profile", json={"owner": owner, "text": core})
    assert put.status_code == 200, put.text
    session = http.post("/api/v1/sessions", json={"kb_ids": [kb["id"]], "owner": owner}).json()
    history_chars = _store_history(session_factory, session["id"])
    return session, core, history_chars


def _answered(
    http: httpx.Client, llm: ScriptedLlmServer, route: str, session_id: str
) -> dict[str, Any]:
    """The question asked on `route` with the model's record cleared first; the answer, whole."""
    llm.clear_requests()
    reply = http.post(f"/api/v1/{route}/{session_id}", json={"query": QUESTION, "stream": False})
    assert reply.status_code == 200, reply.text
    answer: dict[str, Any] = reply.json()
    assert answer["completed"] is True and answer["answer"] == ANSWER, answer["error"]
    return answer


def test_history_passages_and_memory_fit_the_budget_together(
    http: httpx.Client,
    worker: WorkerProcess,
    settings: Settings,
    fresh_scripted_llm: ScriptedLlmServer,
    session_factory: sessionmaker[Session],
) -> None:
    budget = settings.memory.compact_threshold_chars
    fresh_scripted_llm.set_rules([], default={"content": ANSWER})
    session, core, history_chars = _long_session(http, session_factory)
    # Each part alone is within the budget; together they are not.
    assert history_chars < budget
    assert history_chars + settings.chat.context_max_chars // 2 + CORE_CHARS > budget

    answer = _answered(http, fresh_scripted_llm, "knowledge-chat", session["id"])
    [sent] = [r.body for r in fresh_scripted_llm.requests("/v1/chat/completions")]
    assert isinstance(sent, dict) and isinstance(sent["messages"], list)
    contents = [str(m["content"]) for m in sent["messages"] if isinstance(m, dict)]
    assert sum(len(c) for c in contents) <= budget
    prompt = "\n".join(contents)
    assert QUESTION in prompt and "summarised" in prompt  # older turns were folded
    numbers = {r["n"] for r in answer["references"]}
    assert numbers and all(f"[{n}] (cranes.md)" in prompt for n in numbers)
    assert f"[{max(numbers) + 1}] (cranes.md)" not in prompt
    assert core[:200] in prompt


AGENT_STEP = "This is step {n} of"


def _contents(body: Mapping[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [str(m.get("content") or "") for m in messages if isinstance(m, dict)]


def _agent_step(n: int, reply: dict[str, object]) -> dict[str, object]:
    # A call sends one system text, its own step's (in the first user turn without a system
    # role, which need not be the last user turn the history leaves).
    match = {"prompt": {"contains": AGENT_STEP.format(n=n)}}
    return {"name": f"step{n}", "match": match, "reply": reply}


def test_every_agent_call_fits_the_budget_with_history_memory_and_tool_results(
    http: httpx.Client,
    worker: WorkerProcess,
    settings: Settings,
    fresh_scripted_llm: ScriptedLlmServer,
    session_factory: sessionmaker[Session],
) -> None:
    budget = settings.memory.compact_threshold_chars
    search = {"name": "knowledge_search", "arguments": {"query": "Quillon harbour cranes"}}
    again = {"name": "knowledge_search", "arguments": {"query": "steel coils northern quays"}}
    fresh_scripted_llm.set_rules(
        [
            _agent_step(1, {"content": "", "tool_calls": [search]}),
            _agent_step(2, {"content": "", "tool_calls": [again]}),
            _agent_step(3, {"content": ANSWER}),
        ],
        default={"content": ANSWER},
    )
    session, core, history_chars = _long_session(http, session_factory)
    assert history_chars < budget < history_chars + CORE_CHARS + settings.chat.context_max_chars

    _answered(http, fresh_scripted_llm, "agent-chat", session["id"])
    calls = [r.body for r in fresh_scripted_llm.requests("/v1/chat/completions")]
    prompts = [_contents(c) for c in calls if isinstance(c, dict) and "tools" in c]
    assert len(prompts) >= 3
    for contents in prompts:
        assert sum(len(c) for c in contents) <= budget
        prompt = "\n".join(contents)
        assert QUESTION in prompt and core[:200] in prompt
    last = "\n".join(prompts[-1])
    assert "Quillon harbour cranes lift containers" in last  # what the tools found is still sent
    assert "turn 0 " not in last  # the oldest turn of the conversation made room
