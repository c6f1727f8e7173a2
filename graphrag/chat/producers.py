"""How a chat mode produces its answer: the one thing knowledge and agent chat do differently.

`service.run_turn` frames every turn the same way (prepare the producer's stages, references,
answer deltas, done or error, persistence); a producer says which stages prepare its turn, does
its work before the references are known, and yields the answer's text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from graphrag.chat.pipeline import PREPARE_ORDER, StageOrder
from graphrag.chat.schemas import AgentStep, DoneEvent, ReferencesEvent
from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.llm.client import TokenUsage

__all__ = ["AnswerProducer", "KnowledgeProducer"]


class AnswerProducer(Protocol):
    """One mode's way to answer a prepared turn."""

    @property
    def stages(self) -> StageOrder:
        """The stages that prepare the turn, in order (`pipeline.PREPARE_ORDER` or a part)."""
        ...

    def gather(self, services: ChatServices, turn: ChatTurn) -> Iterator[AgentStep]:
        """Work before the references are known, as steps; fills `turn.references`."""
        ...

    def answer(self, services: ChatServices, turn: ChatTurn) -> Iterator[str]:
        """The answer's text, piece by piece (its LLM calls' tokens added to `turn.usage`)."""
        ...

    def references_event(self, turn: ChatTurn) -> ReferencesEvent:
        """The `references` event, with what this mode adds to it."""
        ...

    def done_event(self, done: DoneEvent) -> DoneEvent:
        """The `done` event, with what this mode adds to it."""
        ...

    def trace(self, turn: ChatTurn) -> list[dict[str, Any]]:
        """What the stored answer records of how it was made."""
        ...


class KnowledgeProducer:
    """Knowledge chat: every stage prepares the prompt, then the LLM streams the answer."""

    stages: StageOrder = PREPARE_ORDER

    def gather(self, services: ChatServices, turn: ChatTurn) -> Iterator[AgentStep]:
        """Nothing: the stages found the passages."""
        return iter(())

    def answer(self, services: ChatServices, turn: ChatTurn) -> Iterator[str]:
        """The LLM's streamed completion of the prepared messages."""
        usage = TokenUsage()
        try:
            yield from services.llm.stream(
                turn.messages, services.settings.chat.answer_max_tokens, usage
            )
        finally:
            turn.usage.add(usage)

    def references_event(self, turn: ChatTurn) -> ReferencesEvent:
        """The numbered passages of the prompt."""
        return ReferencesEvent(
            references=turn.references,
            entities=turn.entities,
            graph_truncated=turn.graph_truncated,
        )

    def done_event(self, done: DoneEvent) -> DoneEvent:
        """Nothing to add."""
        return done

    def trace(self, turn: ChatTurn) -> list[dict[str, Any]]:
        """The stages' timings."""
        return [{"stage": k, "ms": v} for k, v in turn.timings_ms.items()]
