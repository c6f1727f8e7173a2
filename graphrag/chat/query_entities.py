"""Names of the entities a question is about, asked of the LLM with the `extract_entity` prompt.

These names seed the graph search. A model that answers something other than a list of names
gives no names: the question then goes on with vector and keyword search alone.
"""

from __future__ import annotations

import logging

from graphrag.chat.turn import TurnUsage
from graphrag.graph.models import normalize_space
from graphrag.llm.client import LlmClient
from graphrag.llm.json_reply import load_json_reply
from graphrag.llm.prompts import load_prompt
from graphrag.settings import ExtractionSettings

__all__ = ["extract_query_entities", "parse_entity_list"]

log = logging.getLogger(__name__)

EXTRACT_ENTITY_PROMPT = "extract_entity"
_LIST_SCHEMA = {"type": "json_object", "schema": {"type": "array", "items": {"type": "string"}}}


def parse_entity_list(answer: str, max_name_chars: int) -> list[str]:
    """Distinct, non-empty names from a JSON array (repaired if cut or fenced); else none."""
    start, end = answer.find("["), answer.rfind("]")
    if start < 0:
        return []
    fragment = answer[start : end + 1] if end > start else answer[start:]
    value = load_json_reply(fragment)
    if not isinstance(value, list):
        return []
    names: dict[str, None] = {}
    for item in value:
        if isinstance(item, str):
            name = normalize_space(item)
            if name and len(name) <= max_name_chars:
                names.setdefault(name, None)
    return list(names)


def extract_query_entities(
    llm: LlmClient,
    question: str,
    settings: ExtractionSettings,
    max_tokens: int,
    usage: TurnUsage | None = None,
) -> list[str]:
    """The entity names of `question`, in the order the model gave them (the call's tokens
    added to `usage`); the answer is cut at `max_tokens` (a list of names is short: a runaway
    answer must not hold a slot for long)."""
    prompt = load_prompt(EXTRACT_ENTITY_PROMPT, settings.prompt_templates_dir)
    messages = prompt.render(question=question).messages()
    reply = llm.complete(messages, _LIST_SCHEMA, max_tokens=max_tokens)
    if usage is not None:
        usage.add(reply.usage)
    names = parse_entity_list(reply.content, settings.max_name_chars)
    log.debug("question entities: %s", names)
    return names
