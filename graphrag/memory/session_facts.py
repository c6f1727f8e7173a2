"""Deterministic facts of a session, read from its recall log without any model.

- each user question with the answer that followed it (`qa`);
- each distinct error met: a tool result flagged `is_error`, or a message holding one of
  `error_words` as a whole word (`error`, at most `max_errors_per_session`);
- the files the session mentioned (a path whose extension is in `file_extensions`), in one fact
  (`files`).
Messages are read word by word in one forward pass (no regex), so a long message costs linear
time whatever it holds.
The entity names recorded with the user turns, and the file names, are the session's entities.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence

from graphrag.db.enums import MessageRole
from graphrag.graph.models import normalize_space
from graphrag.memory.recall_log import ENTITIES_KEY, RecallEntry
from graphrag.memory.records import FactKind, NewFact, SessionEntity
from graphrag.settings import MemorySettings
from graphrag.text_scan import is_word_char

__all__ = [
    "ERROR_FLAG_KEY",
    "clip",
    "deterministic_facts",
    "files_mentioned",
    "recorded_entities",
]

ERROR_FLAG_KEY = "is_error"
_PATH_PUNCTUATION = "/.-"  # characters of a path besides letters, digits and `_`
_PATH_SEPARATOR, _EXTENSION_DOT = "/", "."


def _runs(text: str, inside: str) -> Iterator[str]:
    """The maximal runs of word characters (plus the characters of `inside`) of `text`."""
    start = None
    for pos, char in enumerate(text):
        if is_word_char(char) or char in inside:
            if start is None:
                start = pos
        elif start is not None:
            yield text[start:pos]
            start = None
    if start is not None:
        yield text[start:]


def _file_name(run: str, extensions: frozenset[str]) -> str | None:
    """`run` (a path-like word) without trailing punctuation, if it names a file we list."""
    path = run.rstrip(_PATH_PUNCTUATION)
    base = path.rsplit(_PATH_SEPARATOR, 1)[-1]
    stem, dot, extension = base.rpartition(_EXTENSION_DOT)
    if not dot or not stem.strip(_PATH_PUNCTUATION) or extension.lower() not in extensions:
        return None
    return path


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


def _is_error(message: RecallEntry, words: frozenset[str]) -> bool:
    if message.role == MessageRole.SYSTEM or not message.content.strip():
        return False
    if message.tool_data.get(ERROR_FLAG_KEY):
        return True
    return any(word.lower() in words for word in _runs(message.content, ""))


def _error_facts(
    messages: Sequence[RecallEntry], session_id: uuid.UUID, settings: MemorySettings
) -> list[NewFact]:
    words = frozenset(word.lower() for word in settings.error_words)
    texts: dict[str, None] = {}
    for message in messages:
        if len(texts) >= settings.max_errors_per_session:
            break
        if _is_error(message, words):
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
    extensions = frozenset(extension.lower() for extension in settings.file_extensions)
    names: dict[str, None] = {}
    for message in messages:
        if message.role == MessageRole.SYSTEM:
            continue
        for run in _runs(message.content, _PATH_PUNCTUATION):
            name = _file_name(run, extensions)
            if name is not None:
                names.setdefault(name, None)
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
