"""Documents' entity resolution: read, decide (rules, then the LLM for open pairs), write."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from graphrag.graph.resolution.judge import Pair, ask_pairs
from graphrag.graph.resolution.made import MadeInRun
from graphrag.graph.resolution.planner import Ask, ResolutionPlan, plan_resolution
from graphrag.graph.resolution.store import Neo4jResolutionStore
from graphrag.llm.client import LlmClient
from graphrag.settings import ResolutionSettings

__all__ = ["ResolutionReport", "resolve_document", "resolve_documents"]

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


def resolve_documents(
    store: Neo4jResolutionStore,
    llm: LlmClient | None,
    settings: ResolutionSettings,
    kb_id: uuid.UUID,
    knowledge_ids: Sequence[uuid.UUID],
    templates: Path | None = None,
    deadline: float | None = None,
) -> tuple[ResolutionReport, list[uuid.UUID]]:
    """Resolve the documents' nodes not resolved yet, read and written together, planned one
    document after the other in the order given (a second run finds none: idempotent). No
    document is planned past `deadline` (`time.monotonic()`: planning is where the model is
    asked); returns the report and the documents done, the first ones given."""
    profiles = store.document_profiles(kb_id, knowledge_ids, settings)
    ask = _asker(llm, settings, templates)
    found = store.candidates(kb_id, profiles, settings)
    made = MadeInRun(settings)
    plans: dict[str, ResolutionPlan] = {}
    done: list[uuid.UUID] = []
    for knowledge_id in knowledge_ids:
        if deadline is not None and time.monotonic() > deadline:
            break
        kg = str(knowledge_id)
        if kg in profiles:
            plans[kg] = plan_resolution(kg, profiles[kg], found.get(kg, {}), settings, ask, made)
        done.append(knowledge_id)
    store.write_plans(kb_id, plans)
    report = ResolutionReport(
        sum(len(p.links) for p in plans.values()),
        sum(p.merged for p in plans.values()),
        sum(len(p.apart) for p in plans.values()),
        sum(p.asked for p in plans.values()),
        sum(p.llm_calls for p in plans.values()),
    )
    if plans:
        log.info("resolution of %d document(s): %s", len(plans), report)
    return report, done


def resolve_document(
    store: Neo4jResolutionStore,
    llm: LlmClient | None,
    settings: ResolutionSettings,
    kb_id: uuid.UUID,
    knowledge_id: uuid.UUID,
    templates: Path | None = None,
) -> ResolutionReport:
    """Resolve one document's nodes not resolved yet."""
    return resolve_documents(store, llm, settings, kb_id, [knowledge_id], templates)[0]
