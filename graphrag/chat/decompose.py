"""A question that asks several things, or needs one fact to find another, split into
sub-questions by one LLM call with the `decompose` prompt.

Each sub-question is searched on its own and the answer prompt lists them, so that a small
model answers every part: asked "which company uses the Sorter X2, and who founded the company
that makes it?", a 1.5B model named the user and the maker but not the founder.
"""

from __future__ import annotations

import logging
from typing import Any

from graphrag.chat.turn import TurnUsage
from graphrag.graph.models import normalize_space
from graphrag.llm.client import LlmClient
from graphrag.llm.json_reply import load_json_reply
from graphrag.llm.prompts import load_prompt
from graphrag.settings import ChatSettings, ExtractionSettings

__all__ = ["decompose_question", "parse_sub_questions"]

log = logging.getLogger(__name__)

DECOMPOSE_PROMPT = "decompose"


def _schema(max_questions: int) -> dict[str, Any]:
    return {
        "type": "json_object",
        "schema": {
            "type": "object",
            "properties": {
                "questions": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "maxItems": max_questions,
                }
            },
            "required": ["questions"],
        },
    }


def parse_sub_questions(answer: str, max_questions: int, max_chars: int) -> list[str]:
    """Distinct non-empty sub-questions of a `{"questions": [...]}` answer (repaired if cut),
    at most `max_questions`, each at most `max_chars` long; a malformed answer gives none."""
    start = answer.find("{")
    if start < 0:
        return []
    value = load_json_reply(answer[start:])
    items = value.get("questions") if isinstance(value, dict) else None
    if not isinstance(items, list):
        return []
    found: dict[str, None] = {}
    for item in items:
        if isinstance(item, str):
            text = normalize_space(item)
            if text and len(text) <= max_chars:
                found.setdefault(text, None)
    return list(found)[:max_questions]


def decompose_question(
    llm: LlmClient,
    question: str,
    chat: ChatSettings,
    extraction: ExtractionSettings,
    usage: TurnUsage | None = None,
) -> list[str]:
    """The sub-questions of `question` (the call's tokens added to `usage`); empty when the
    model keeps it whole, since one sub-question would only repeat it."""
    prompt = load_prompt(DECOMPOSE_PROMPT, extraction.prompt_templates_dir)
    messages = prompt.render(
        question=question, max_questions=str(chat.decompose_max_questions)
    ).messages()
    reply = llm.complete(
        messages, _schema(chat.decompose_max_questions), max_tokens=chat.decompose_max_tokens
    )
    if usage is not None:
        usage.add(reply.usage)
    parts = parse_sub_questions(reply.content, chat.decompose_max_questions, chat.max_query_chars)
    log.debug("sub-questions: %s", parts)
    return parts if len(parts) > 1 else []
