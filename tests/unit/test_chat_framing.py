"""One framing for every chat mode: `run_turn` with fake producers, the memory stage's two
reads, the turn's token sums, and the typed events and answers the API documents."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from graphrag.chat.pipeline import StageOrder
from graphrag.chat.schemas import (
    AgentStep,
    ChatEventType,
    ChatRequest,
    DeltaEvent,
    DoneEvent,
    ErrorEvent,
    ReferencesEvent,
    StepKind,
)
from graphrag.chat.service import chat_answer, complete_turn, run_turn
from graphrag.chat.stages import recall_memory
from graphrag.chat.turn import ChatServices, ChatTurn, TurnUsage
from graphrag.errors import (
    EmbeddingError,
    GraphDataError,
    GraphragError,
    GraphStoreError,
    LlmRequestError,
    LlmUnavailableError,
)
from graphrag.graph.store import DisabledGraphStore
from graphrag.llm.client import LlmClient, LlmReply, TokenUsage
from graphrag.llm.messages import ChatMessage
from graphrag.settings import get_settings

pytestmark = pytest.mark.unit

QUESTION = "Who runs the plant?"


class NoEmbedder:
    dim = 1

    def embed(self, texts: Any) -> list[list[float]]:
        raise AssertionError("not called")

    def embed_query(self, text: str) -> list[float]:
        raise AssertionError("not called")

    def close(self) -> None:
        """Nothing to release."""


class FakeMemory:
    """The memory port, recording which read each turn made."""

    def __init__(self) -> None:
        self.reads: list[str] = []

    def recall(self, tenant_id: uuid.UUID, owner: str, query: str) -> str:
        self.reads.append("recall")
        return "# Core memory\n## profile\nAda.\n\n# Things remembered from earlier sessions\n- x"

    def core(self, tenant_id: uuid.UUID, owner: str) -> str:
        self.reads.append("core")
        return "# Core memory\n## profile\nAda."

    def fit_history(
        self,
        tenant_id: uuid.UUID,
        owner: str,
        session_id: uuid.UUID,
        history: list[ChatMessage],
        reserve_chars: int = 0,
    ) -> tuple[str | None, list[ChatMessage]]:
        return None, history

    def record_exchange(self, session: Session, *args: Any) -> None:
        raise AssertionError("not called")

    def forget_session(self, tenant_id: uuid.UUID, session_id: uuid.UUID) -> int:
        raise AssertionError("not called")


def _services(memory: FakeMemory | None = None) -> ChatServices:
    settings = get_settings()
    return ChatServices(
        settings=settings,
        sessions=sessionmaker(),
        embedder=NoEmbedder(),
        llm=LlmClient(settings.llm),
        graph=DisabledGraphStore(),
        memory=memory,
    )


def _turn(history: list[ChatMessage] | None = None) -> ChatTurn:
    # No session: a stateless turn, so nothing is persisted and no database is needed.
    return ChatTurn(
        tenant_id=uuid.uuid4(),
        session_id=None,
        owner="ada",
        request=ChatRequest(query=QUESTION),
        scopes=[],
        history=history or [],
    )


class FakeProducer:
    """Steps, then deltas (each call's usage added), failing after `fail_after` deltas."""

    stages: StageOrder = ()

    def __init__(
        self,
        deltas: list[str],
        fail_after: int | None = None,
        failure: GraphragError | None = None,
    ) -> None:
        self.deltas = deltas
        self.fail_after = fail_after
        self.failure = failure or LlmUnavailableError("LLM call failed: gone")
        self.traced: list[dict[str, Any]] | None = None

    def gather(self, services: ChatServices, turn: ChatTurn) -> Iterator[AgentStep]:
        yield AgentStep(step=1, kind=StepKind.RESPOND, summary="ok")

    def answer(self, services: ChatServices, turn: ChatTurn) -> Iterator[str]:
        turn.usage.add(TokenUsage(11, 4))
        for index, delta in enumerate(self.deltas):
            if index == self.fail_after:
                raise self.failure
            yield delta

    def references_event(self, turn: ChatTurn) -> ReferencesEvent:
        return ReferencesEvent(references=turn.references, entities=["Plant"])

    def done_event(self, done: DoneEvent) -> DoneEvent:
        return done

    def trace(self, turn: ChatTurn) -> list[dict[str, Any]]:
        self.traced = [{"steps": len(turn.steps)}]
        return self.traced


def test_events_come_framed_in_order_with_the_usage_in_done() -> None:
    turn, producer = _turn(), FakeProducer(["Elin ", "Brask [1]."])
    events = list(run_turn(_services(), turn, producer))
    assert [e.type for e in events] == [
        ChatEventType.STEP,
        ChatEventType.REFERENCES,
        ChatEventType.DELTA,
        ChatEventType.DELTA,
        ChatEventType.DONE,
    ]
    done = events[-1].data
    assert isinstance(done, DoneEvent) and done.answer_chars == len("Elin Brask [1].")
    assert done.usage is not None and done.usage.model_dump() == {
        "prompt_tokens": 11,
        "completion_tokens": 4,
        "total_tokens": 15,
        "llm_calls": 1,
    }
    assert "total" in done.timings_ms
    assert turn.completed and turn.answer == "Elin Brask [1]." and turn.error is None
    assert producer.traced == [{"steps": 1}]  # persisted (here: nothing) whatever the mode


def test_llm_failure_ends_with_an_error_and_keeps_the_partial_answer() -> None:
    turn, producer = _turn(), FakeProducer(["Elin ", "Brask."], fail_after=1)
    events = list(run_turn(_services(), turn, producer))
    assert events[-1].type is ChatEventType.ERROR
    assert isinstance(events[-1].data, ErrorEvent) and events[-1].data.code == "llm_unavailable"
    assert [e.data.content for e in events if isinstance(e.data, DeltaEvent)] == ["Elin "]
    assert not turn.completed and turn.answer == "Elin " and producer.traced is not None
    whole = chat_answer(turn)
    assert whole.error == turn.error and whole.completed is False and whole.answer == "Elin "


@pytest.mark.parametrize(
    "failure",
    [
        LlmRequestError("LLM refused the request (400): over the context"),
        EmbeddingError("embedding server unreachable"),
        GraphStoreError("Neo4j unreachable"),
        GraphDataError("Neo4j refused the data"),
    ],
    ids=lambda failure: failure.code,
)
def test_any_graphrag_error_ends_the_stream_with_its_code(failure: GraphragError) -> None:
    turn = _turn()
    events = list(run_turn(_services(), turn, FakeProducer(["Elin "], 0, failure)))
    assert [e.type for e in events][-1] is ChatEventType.ERROR
    assert events[-1].data == ErrorEvent(code=failure.code, message=failure.message)
    assert turn.failure is failure and turn.error == events[-1].data and not turn.completed


def test_a_turn_run_whole_is_the_json_answer() -> None:
    turn = _turn()
    complete_turn(_services(), turn, FakeProducer(["Done."]))
    whole = chat_answer(turn).model_dump(mode="json")
    assert whole["answer"] == "Done." and whole["completed"] is True and whole["error"] is None
    assert whole["usage"]["total_tokens"] == 15


def test_core_memory_on_every_turn_recall_only_on_the_first() -> None:
    memory = FakeMemory()
    first = _turn()
    recall_memory(_services(memory), first)
    assert "Things remembered" in first.memory_context
    history = [ChatMessage(role="user", content="Q"), ChatMessage(role="assistant", content="A")]
    later = _turn(history)
    recall_memory(_services(memory), later)
    assert later.memory_context == "# Core memory\n## profile\nAda."
    assert memory.reads == ["recall", "core"]  # facts counted as accessed once per session


def test_usage_sums_only_what_the_server_reported() -> None:
    usage = TurnUsage()
    assert usage.public() is None
    usage.add(LlmReply("[]", "stop").usage)  # a server that sent no usage
    assert usage.public() is None and usage.llm_calls == 1
    usage.add(LlmReply("[]", "stop", usage=TokenUsage(30, 2)).usage)
    usage.add(TokenUsage(None, None))
    public = usage.public()
    assert public is not None
    assert (public.prompt_tokens, public.completion_tokens, public.total_tokens) == (30, 2, 32)
    assert public.llm_calls == 3


def test_openapi_shows_the_answers_and_the_event_payloads() -> None:
    from api.app import create_app
    from graphrag.settings import Settings

    spec = create_app(Settings()).openapi()
    for path, answer, events in (
        ("/api/v1/knowledge-chat/{session_id}", "ChatAnswer", ["references", "delta", "done"]),
        ("/api/v1/agent-chat/{session_id}", "AgentChatAnswer", ["step", "references", "done"]),
    ):
        content = spec["paths"][path]["post"]["responses"]["200"]["content"]
        assert content["application/json"]["schema"] == {"$ref": f"#/components/schemas/{answer}"}
        frames = content["text/event-stream"]["schema"]["oneOf"]
        names = [frame["properties"]["event"]["const"] for frame in frames]
        assert set(events) | {"error"} <= set(names)
        done = frames[names.index("done")]["properties"]["data"]
        assert "usage" in done["properties"] and "$ref" not in str(done)
    agent = spec["components"]["schemas"]["AgentChatAnswer"]["properties"]
    assert {"steps", "usage", "references", "error"} <= set(agent)
