"""The fast path: greetings, thanks and empty questions answered from the settings' rule table
(`chat.fast_path`), with no retrieval and no model call.

A question is normalised (lowercased, every character that is not a letter or a digit made a
space, spaces joined) and compared whole with each rule's phrases: "hello!" is a greeting,
"hello, who runs the plant?" is a question. Nothing is matched by pattern. The answer is framed
like any other turn (`service.run_turn`: references, deltas, done, stored in the session) by the
mode's own producer, so clients see the events their mode always sends.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphrag.chat.pipeline import StageOrder
from graphrag.chat.producers import AnswerProducer
from graphrag.chat.schemas import AgentStep, DoneEvent, ReferencesEvent
from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.settings import FastPathSettings

__all__ = ["EMPTY_RULE", "FastAnswer", "FastReply", "fast_reply", "normalise", "route"]

EMPTY_RULE = "empty"


def normalise(question: str) -> str:
    """`question` lowercased, each character other than a letter or a digit a space, the spaces
    joined: the form the rule phrases are written in."""
    kept = "".join(ch if ch.isalnum() else " " for ch in question.casefold())
    return " ".join(kept.split())


@dataclass(frozen=True)
class FastReply:
    """The rule that answers a question, and its answer."""

    rule: str
    answer: str


def fast_reply(settings: FastPathSettings, question: str) -> FastReply | None:
    """The table's answer to `question`, or None when the question needs the model."""
    if not settings.enabled:
        return None
    text = normalise(question)
    if not text:
        return FastReply(EMPTY_RULE, settings.empty_answer)
    for rule in settings.rules:
        if any(text == normalise(phrase) for phrase in rule.phrases):
            return FastReply(rule.name, rule.answer)
    return None


class FastAnswer:
    """A turn answered from the table: no stage runs, the mode's producer frames the events."""

    stages: StageOrder = ()

    def __init__(self, mode: AnswerProducer, reply: FastReply) -> None:
        self._mode = mode
        self._reply = reply

    def gather(self, services: ChatServices, turn: ChatTurn) -> Iterator[AgentStep]:
        """Nothing to gather."""
        return iter(())

    def answer(self, services: ChatServices, turn: ChatTurn) -> Iterator[str]:
        """The rule's answer, whole."""
        yield self._reply.answer

    def references_event(self, turn: ChatTurn) -> ReferencesEvent:
        """The mode's own (empty) references event."""
        return self._mode.references_event(turn)

    def done_event(self, done: DoneEvent) -> DoneEvent:
        """The mode's own done event."""
        return self._mode.done_event(done)

    def trace(self, turn: ChatTurn) -> list[dict[str, Any]]:
        """Which rule answered."""
        return [{"stage": "fast_path", "rule": self._reply.rule}]


def route(services: ChatServices, turn: ChatTurn, mode: AnswerProducer) -> AnswerProducer:
    """The producer of the turn: the fast path when the table answers its question, else
    `mode`."""
    reply = fast_reply(services.settings.chat.fast_path, turn.request.query)
    return mode if reply is None else FastAnswer(mode, reply)
