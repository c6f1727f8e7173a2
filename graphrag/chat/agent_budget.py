"""Each model call of an agent turn within `memory.compact_threshold_chars`, like the knowledge
chat's prompt (`prompt_budget`).

The loop's dialogue grows with every tool result, on top of the history, the memory block and
the summary of folded turns in the system text. When a call's whole prompt is over the budget,
`fit_agent_call` leaves out the earliest exchanges of the conversation before the question
(as the knowledge chat compacts its history first), then cuts the tool results but the latest,
oldest first (they were already cut to `memory.tool_result_max_chars` by `ToolResultCut`),
then the latest result, then the memory block, until it fits. The question and the messages
after it are never left out: the model keeps what it asked and, in part at least, what this
turn found.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass

from graphrag.chat.prompt_budget import SEPARATOR_CHARS, prompt_chars
from graphrag.llm.messages import ChatMessage
from graphrag.llm.tool_results import TOOL_ROLE, cut_text

__all__ = ["AgentCall", "fit_agent_call"]

# The system text with this many characters cut from the end of its memory block.
SystemText = Callable[[int], str]

# Room for the marker `cut_text` leaves in a cut result ("[... 12345 characters cut]").
_MARKER_CHARS = 32


@dataclass(frozen=True)
class AgentCall:
    """The dialogue of one call, where its question is, and which messages are tool results
    (`tool` messages, or user messages that hand results back as text)."""

    messages: Sequence[ChatMessage]
    question_at: int
    results: Container[int]


def _results(call: AgentCall) -> list[int]:
    return [
        index
        for index, message in enumerate(call.messages)
        if message.role == TOOL_ROLE or index in call.results
    ]


def _cut(messages: list[ChatMessage], indices: list[int], over: int) -> int:
    """Cut the messages at `indices`, in that order, until `over` characters are gone; what
    is left over."""
    for index in indices:
        if over <= 0:
            break
        content = messages[index].content
        shorter = cut_text(content, max(len(content) - over - _MARKER_CHARS, 0))
        if len(shorter) < len(content):
            over -= len(content) - len(shorter)
            messages[index] = messages[index].model_copy(update={"content": shorter})
    return over


def fit_agent_call(system: SystemText, call: AgentCall, budget: int) -> list[ChatMessage]:
    """The messages of the call (system first) within `budget` characters (see the module)."""
    text = system(0)
    over = len(text) + SEPARATOR_CHARS + prompt_chars(call.messages) - budget
    if over <= 0:
        return [ChatMessage(role="system", content=text), *call.messages]
    messages = list(call.messages)
    dropped = 0
    # Whole exchanges go: the dialogue still starts with a user message.
    while dropped < call.question_at and (over > 0 or messages[dropped].role != "user"):
        over -= len(messages[dropped].content) + SEPARATOR_CHARS
        dropped += 1
    results = [index for index in _results(call) if index >= dropped]
    over = _cut(messages, results[:-1], over)
    over = _cut(messages, results[-1:], over)
    if over > 0:
        text = system(over)
    return [ChatMessage(role="system", content=text), *messages[dropped:]]
