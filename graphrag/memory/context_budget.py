"""Keep a conversation inside its character budget, deterministically (pure functions).

1. Tool results older than the last `keep_last_messages` messages are cut to
   `tool_result_max_chars`.
2. If the conversation still exceeds `compact_threshold_chars`, every message before the last
   `keep_last_messages` becomes one summary (objective / actions / progress), placed in the
   single system message at the head (local chat templates accept only one, and only first).
   The kept tail never starts with a tool result whose call was summarised away.
The last `keep_last_messages` messages are never changed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from graphrag.llm.messages import ChatMessage
from graphrag.llm.tool_results import ToolResultCut, cut_text
from graphrag.settings import MemorySettings
from graphrag.value_model import ValueModel

__all__ = [
    "BudgetedContext",
    "context_chars",
    "fit_context",
    "summarize_messages",
]

SUMMARY_HEADING = "Summary of the earlier conversation"


class BudgetedContext(ValueModel):
    """The messages to send, and what was done to fit them."""

    messages: list[ChatMessage]
    summary: str | None = None
    summarized_messages: int = 0
    truncated_tool_results: int = 0
    chars_before: int
    chars_after: int


def _chars(message: ChatMessage) -> int:
    calls = json.dumps([c.wire() for c in message.tool_calls]) if message.tool_calls else ""
    return len(message.content) + len(calls)


def context_chars(messages: Sequence[ChatMessage]) -> int:
    """Characters of content and tool calls of `messages`."""
    return sum(_chars(m) for m in messages)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _actions(messages: Sequence[ChatMessage], settings: MemorySettings) -> list[str]:
    actions: list[str] = []
    for message in messages:
        if message.role != "assistant":
            continue
        actions += [f"called {call.name}({call.arguments})" for call in message.tool_calls]
        line = _first_line(message.content)
        if line:
            actions.append(f"answered: {line}")
    keep = actions[-settings.summary_max_actions :] if settings.summary_max_actions else []
    return [cut_text(a, settings.summary_action_chars) for a in keep]


def summarize_messages(messages: Sequence[ChatMessage], settings: MemorySettings) -> str:
    """A deterministic summary of `messages`: the objective, the actions, the progress."""
    users = [m for m in messages if m.role == "user" and m.content.strip()]
    answers = [m for m in messages if m.role == "assistant" and m.content.strip()]
    objective = (
        cut_text(users[0].content.strip(), settings.summary_objective_chars) if users else ""
    )
    progress = (
        cut_text(answers[-1].content.strip(), settings.summary_progress_chars) if answers else ""
    )
    lines = [
        f"{SUMMARY_HEADING} ({len(messages)} messages):",
        f"Objective: {objective or '(none stated)'}",
        "Actions:",
    ]
    lines += [f"- {a}" for a in _actions(messages, settings)] or ["- (none)"]
    lines.append(f"Progress: {progress or '(nothing yet)'}")
    return "\n".join(lines)


def _tail_start(messages: Sequence[ChatMessage], keep_last: int) -> int:
    """Where the kept tail begins: `keep_last` from the end, moved back over tool results so
    each kept result keeps the assistant turn that called it."""
    start = max(len(messages) - keep_last, 0)
    while start > 0 and messages[start].role == "tool":
        start -= 1
    return start


def fit_context(messages: Sequence[ChatMessage], settings: MemorySettings) -> BudgetedContext:
    """Fit `messages` to the budget of `settings` (see the module's rules)."""
    before = context_chars(messages)
    system_text = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    dialogue = [m for m in messages if m.role != "system"]
    keep_last = settings.keep_last_messages
    dialogue, cut = ToolResultCut(keep_last, settings.tool_result_max_chars).apply(dialogue)
    summary: str | None = None
    folded = 0
    if len(system_text) + context_chars(dialogue) > settings.compact_threshold_chars:
        start = _tail_start(dialogue, keep_last)
        if start > 0:
            summary = summarize_messages(dialogue[:start], settings)
            folded = start
            dialogue = dialogue[start:]
    head = "\n\n".join(part for part in (system_text, summary) if part)
    result = ([ChatMessage(role="system", content=head)] if head else []) + dialogue
    return BudgetedContext(
        messages=result,
        summary=summary,
        summarized_messages=folded,
        truncated_tool_results=cut,
        chars_before=before,
        chars_after=context_chars(result),
    )
