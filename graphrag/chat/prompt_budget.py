"""The whole prompt of a knowledge-chat turn within `memory.compact_threshold_chars`.

The history is compacted to that budget when it is loaded, before the passages and the memory
block are known; they then come on top of it. `fit_prompt` counts them all: when the composed
prompt is over the budget it compacts the history again with what the rest takes reserved,
then leaves out passages from the last one, then cuts the memory block, until it fits. The
last messages of the conversation and the question are never cut (their lengths are bounded
by `chat.max_query_chars` and `chat.answer_max_tokens`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.llm.messages import ChatMessage

__all__ = ["SEPARATOR_CHARS", "FittedPrompt", "fit_prompt", "prompt_chars"]

# What a client may put between two parts it joins (a system text folded into the first user
# turn is followed by "\n\n"): counted once per message.
SEPARATOR_CHARS = 2


def prompt_chars(messages: Sequence[ChatMessage]) -> int:
    """Characters the messages send, one separator each counted in."""
    return sum(len(m.content) + SEPARATOR_CHARS for m in messages)


# The prompt for a choice of passages (how many of the first ones) and memory block text.
Compose = Callable[[int, str], list[ChatMessage]]


@dataclass(frozen=True)
class FittedPrompt:
    """The messages within the budget, and how many passages they kept."""

    messages: list[ChatMessage]
    passages: int


def _refit_history(services: ChatServices, turn: ChatTurn, compose: Compose, n: int) -> None:
    """Compact the loaded conversation again, the rest of the prompt reserved."""
    if services.memory is None or turn.session_id is None or not turn.loaded_history:
        return  # without the memory the history is its last few turns already
    kept, summary = turn.history, turn.history_summary
    turn.history, turn.history_summary = [], None
    reserve = prompt_chars(compose(n, turn.memory_context))
    turn.history, turn.history_summary = kept, summary
    turn.history_summary, turn.history = services.memory.fit_history(
        turn.tenant_id, turn.owner, turn.session_id, turn.loaded_history, reserve
    )


def fit_prompt(
    services: ChatServices, turn: ChatTurn, compose: Compose, passages: int
) -> FittedPrompt:
    """The prompt of `compose` within the budget (see the module); may change the turn's
    history, summary and memory block."""
    budget = services.settings.memory.compact_threshold_chars
    messages = compose(passages, turn.memory_context)
    if prompt_chars(messages) <= budget:
        return FittedPrompt(messages, passages)
    _refit_history(services, turn, compose, passages)
    messages = compose(passages, turn.memory_context)
    while prompt_chars(messages) > budget and passages > 0:
        passages -= 1
        messages = compose(passages, turn.memory_context)
    over = prompt_chars(messages) - budget
    if over > 0 and turn.memory_context:
        turn.memory_context = turn.memory_context[: max(len(turn.memory_context) - over, 0)]
        messages = compose(passages, turn.memory_context)
    return FittedPrompt(messages, passages)
