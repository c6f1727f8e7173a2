"""One document's entity resolution: read, decide (rules, then the LLM for open pairs), write."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from graphrag.graph.resolution.judge import Pair, ask_pairs
from graphrag.graph.resolution.planner import Ask, plan_resolution
from graphrag.graph.resolution.store import Neo4jResolutionStore
from graphrag.llm.client import LlmClient
from graphrag.settings import ResolutionSettings

__all__ = ["ResolutionReport", "resolve_document"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResolutionReport:
    """What one run did: entities resolved, how many joined an existing resolved entity, how
    many homonyms were kept apart, pairs asked to the model and its calls."""

    entities: int
    merged: int
    kept_apart: int
    asked: int
    llm_calls: int


def _asker(llm: LlmClient | None, s: ResolutionSettings, templates: Path | None) -> Ask | None:
    if llm is None or not s.llm_enabled or s.llm_max_calls_per_document == 0:
        return None

    def ask(pairs: Sequence[Pair]) -> tuple[dict[int, bool], int]:
        return ask_pairs(llm, pairs, s, templates)

    return ask


def resolve_document(
    store: Neo4jResolutionStore,
    llm: LlmClient | None,
    settings: ResolutionSettings,
    kb_id: uuid.UUID,
    knowledge_id: uuid.UUID,
    templates: Path | None = None,
) -> ResolutionReport:
    """Resolve the document's nodes not resolved yet (a second run finds none: idempotent)."""
    profiles = store.document_profiles(kb_id, knowledge_id, settings)
    if not profiles:
        return ResolutionReport(0, 0, 0, 0, 0)
    found = store.candidates(kb_id, knowledge_id, profiles, settings)
    plan = plan_resolution(
        str(knowledge_id), profiles, found, settings, _asker(llm, settings, templates)
    )
    store.write_plan(kb_id, knowledge_id, plan)
    report = ResolutionReport(
        len(plan.links), plan.merged, len(plan.apart), plan.asked, plan.llm_calls
    )
    log.info("resolution of %s: %s", knowledge_id, report)
    return report
