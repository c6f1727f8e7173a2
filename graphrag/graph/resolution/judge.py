"""The pairs the rules leave open, asked to the LLM in batches: one constrained call per batch.

The reply is held to a JSON schema (`{"answers": [{"pair": n, "same": bool}]}`); a pair the model
leaves out, a malformed reply or an unavailable server is an unanswered pair, which the resolver
treats as "not the same".
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphrag.errors import LlmRequestError, LlmUnavailableError
from graphrag.graph.resolution.models import Candidate, EntityProfile
from graphrag.llm.client import LlmClient
from graphrag.llm.json_reply import load_json_reply
from graphrag.llm.prompts import load_prompt
from graphrag.settings import ResolutionSettings

__all__ = ["RESOLVE_PROMPT", "Pair", "ask_pairs", "parse_answers", "render_pairs"]

log = logging.getLogger(__name__)

RESOLVE_PROMPT = "resolve_entities"

_SCHEMA: dict[str, Any] = {
    "type": "json_object",
    "schema": {
        "type": "object",
        "properties": {
            "answers": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"pair": {"type": "integer"}, "same": {"type": "boolean"}},
                    "required": ["pair", "same"],
                },
            }
        },
        "required": ["answers"],
    },
}


@dataclass(frozen=True)
class Pair:
    """A document's entity and the resolved entity the rules could not decide on."""

    profile: EntityProfile
    candidate: Candidate


def _relation(kind: str, key: str) -> str:
    """ "works_at>" and "orla labs" as "works at orla labs"; "<" reads the other way."""
    verb = kind[:-1].replace("_", " ").lower()
    return f"{verb} {key}" if kind.endswith(">") else f"{key} {verb} it"


def _side(
    name: str,
    attributes: Sequence[str],
    related: Sequence[tuple[str, str]],
    s: ResolutionSettings,
) -> str:
    said = "; ".join(attributes[: s.prompt_attributes]) or "nothing"
    links = ", ".join(_relation(kind, key) for kind, key in related[: s.prompt_neighbours])
    return f"{json.dumps(name, ensure_ascii=False)} (said: {said}; relations: {links or 'none'})"


def render_pairs(pairs: Sequence[Pair], settings: ResolutionSettings) -> str:
    """The pairs as numbered lines, from 1."""
    lines = []
    for number, pair in enumerate(pairs, start=1):
        p, c = pair.profile, pair.candidate
        left = _side(p.name, p.attributes, p.related, settings)
        right = _side(c.name, c.attributes, c.related, settings)
        lines.append(f"{number}. A: {left}\n   B: {right}")
    return "\n".join(lines)


def parse_answers(text: str, count: int) -> dict[int, bool]:
    """Pair index (from 0) -> same, for the pairs the reply answers; malformed: none."""
    start = text.find("{")
    if start < 0:
        return {}
    value = load_json_reply(text[start:])
    items = value.get("answers") if isinstance(value, dict) else None
    answers: dict[int, bool] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        number, same = item.get("pair"), item.get("same")
        if isinstance(number, int) and isinstance(same, bool) and 1 <= number <= count:
            answers.setdefault(number - 1, same)
    return answers


def ask_pairs(
    llm: LlmClient, pairs: Sequence[Pair], settings: ResolutionSettings, templates: Path | None
) -> tuple[dict[int, bool], int]:
    """Answers for `pairs` (index -> same) and the calls made: batches of
    `llm_batch_pairs`, at most `llm_max_calls_per_document` calls; a failed call answers none."""
    prompt = load_prompt(RESOLVE_PROMPT, templates)
    answers: dict[int, bool] = {}
    calls = 0
    size = settings.llm_batch_pairs
    for start in range(0, len(pairs), size):
        if calls >= settings.llm_max_calls_per_document:
            break
        batch = pairs[start : start + size]
        messages = prompt.render(pairs=render_pairs(batch, settings)).messages()
        calls += 1
        try:
            reply = llm.complete(
                messages,
                _SCHEMA,
                max_tokens=settings.llm_max_tokens,
                temperature=settings.llm_temperature,
            )
        except (LlmUnavailableError, LlmRequestError) as exc:
            log.warning("resolution: %d pair(s) not asked: %s", len(batch), exc)
            continue
        for index, same in parse_answers(reply.content, len(batch)).items():
            answers[start + index] = same
    return answers, calls
