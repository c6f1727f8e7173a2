"""Deterministic facts of a session, read from its recall log without any model.

- each user question with the answer that followed it (`qa`);
- each distinct error met: a tool result flagged `is_error`, or a message matching
  `error_pattern` (`error`, at most `max_errors_per_session`);
- the files the session mentioned, in one fact (`files`).
The entity names recorded with the user turns, and the file names, are the session's entities.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence

from graphrag.db.enums import MessageRole
from graphrag.graph.models import normalize_space
from graphrag.memory.models import FactKind, NewFact, SessionEntity
from graphrag.memory.recall_log import ENTITIES_KEY, RecallEntry
from graphrag.settings import MemorySettings

__all__ = [
    "ERROR_FLAG_KEY",
    "clip",
    "deterministic_facts",
    "files_mentioned",
    "recorded_entities",
]

ERROR_FLAG_KEY = "is_error"


def clip(text: str, max_chars: int) -> str:
    """Whitespace-normalised `text`, cut to `max_chars` with an ellipsis when longer."""
    flat = normalize_space(text)
    return flat if len(flat) <= max_chars else flat[: max_chars - 1].rstrip() + "…"


def _qa_facts(
    messages: Sequence[RecallEntry], session_id: uuid.UUID, settings: MemorySettings
) -> list[NewFact]:
    facts: list[NewFact] = []
    question: str | None = None
    for message in messages:
        if message.role == MessageRole.USER and message.content.strip():
            question = message.content
        elif message.role == MessageRole.ASSISTANT and message.content.strip() and question:
            text = (
                f"Q: {clip(question, settings.question_max_chars)} "
                f"A: {clip(message.content, settings.answer_max_chars)}"
            )
            facts.append(
                NewFact(
                    text=text,
                    kind=FactKind.QA,
                    importance=settings.importance.qa,
                    session_id=session_id,
                )
            )
            question = None
    return facts


def _is_error(message: RecallEntry, pattern: re.Pattern[str]) -> bool:
    if message.role == MessageRole.SYSTEM or not message.content.strip():
        return False
    return bool(message.tool_data.get(ERROR_FLAG_KEY)) or bool(pattern.search(message.content))


def _error_facts(
    messages: Sequence[RecallEntry], session_id: uuid.UUID, settings: MemorySettings
) -> list[NewFact]:
    pattern = re.compile(settings.error_pattern)
    texts: dict[str, None] = {}
    for message in messages:
        if len(texts) >= settings.max_errors_per_session:
            break
        if _is_error(message, pattern):
            texts.setdefault(
                f"Error ({message.role.value}): {clip(message.content, settings.error_max_chars)}",
                None,
            )
    return [
        NewFact(
            text=text,
            kind=FactKind.ERROR,
            importance=settings.importance.error,
            session_id=session_id,
        )
        for text in texts
    ]


def files_mentioned(messages: Sequence[RecallEntry], settings: MemorySettings) -> list[str]:
    """Distinct file names in the session's messages, first mention first, capped."""
    pattern = re.compile(settings.file_pattern)
    names: dict[str, None] = {}
    for message in messages:
        if message.role == MessageRole.SYSTEM:
            continue
        for match in pattern.finditer(message.content):
            names.setdefault(match.group(0), None)
    return list(names)[: settings.max_files_listed]


def recorded_entities(messages: Sequence[RecallEntry]) -> list[SessionEntity]:
    """The entity names recorded with the session's user turns, first mention first."""
    names: dict[str, None] = {}
    for message in messages:
        raw = message.tool_data.get(ENTITIES_KEY)
        if isinstance(raw, list):
            for item in raw:
                if isinstance(item, str) and normalize_space(item):
                    names.setdefault(normalize_space(item), None)
    return [SessionEntity(name=name) for name in names]


def deterministic_facts(
    messages: Sequence[RecallEntry], session_id: uuid.UUID, settings: MemorySettings
) -> list[NewFact]:
    """Question/answer, error and file facts of the session's `messages`."""
    facts = _qa_facts(messages, session_id, settings) + _error_facts(messages, session_id, settings)
    files = files_mentioned(messages, settings)
    if files:
        facts.append(
            NewFact(
                text="Files mentioned: " + ", ".join(files),
                kind=FactKind.FILES,
                importance=settings.importance.files,
                session_id=session_id,
            )
        )
    return facts
