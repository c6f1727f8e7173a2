"""A document's own extraction settings: checked against its base's at upload and on change,
and the effective config shown with the document.

A change that alters what the document's graph is extracted with offers a rebuild of that
document alone: a new attempt of it (`request_reparse`: parsed, chunked and extracted again),
whose chunk tasks read the new settings; the other documents of the base are not touched.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from graphrag.db.models import Knowledge, KnowledgeBase
from graphrag.extraction.models import ExtractConfig
from graphrag.extraction.overrides import ExtractOverride, check_override, effective_config
from graphrag.kb.service import get_kb_row, kb_graph_on
from graphrag.settings import Settings

__all__ = [
    "GraphImpact",
    "base_config",
    "effective_of",
    "graph_impact",
    "override_of",
    "stored_override",
]


def base_config(kb: KnowledgeBase) -> ExtractConfig:
    """The base's own extraction config as stored."""
    return ExtractConfig.model_validate(kb.extract_config)


def override_of(doc: Knowledge) -> ExtractOverride | None:
    """The document's stored settings (None: the base's alone)."""
    return ExtractOverride.model_validate(doc.extract_override) if doc.extract_override else None


def effective_of(session: Session, doc: Knowledge) -> ExtractConfig:
    """What the document's chunks are extracted with."""
    kb = session.get(KnowledgeBase, doc.kb_id)
    assert kb is not None  # a document's base outlives it
    return effective_config(base_config(kb), override_of(doc))


def stored_override(
    session: Session,
    settings: Settings,
    tenant_id: uuid.UUID,
    kb_id: uuid.UUID,
    override: ExtractOverride | None,
) -> dict[str, Any] | None:
    """The settings as stored, after checking them over the base's (422
    `extract_override_invalid`); None when they leave everything to the base."""
    if override is None or override.is_empty:
        return None
    kb = get_kb_row(session, tenant_id, kb_id)
    check_override(base_config(kb), override, settings.extraction)
    return override.model_dump(exclude_none=True)


@dataclass(frozen=True)
class GraphImpact:
    """What new settings mean for a document's graph: whether its base builds one at all, and
    whether they change what it is extracted with."""

    graph_on: bool
    changed: bool


def graph_impact(
    session: Session, settings: Settings, doc: Knowledge, new: ExtractOverride | None
) -> GraphImpact:
    """The impact of `new` over the document's stored settings (a base with its graph off
    extracts nothing either way)."""
    kb = session.get(KnowledgeBase, doc.kb_id)
    assert kb is not None
    if not kb_graph_on(settings, kb):
        return GraphImpact(graph_on=False, changed=False)
    base = base_config(kb)
    changed = effective_config(base, override_of(doc)) != effective_config(base, new)
    return GraphImpact(graph_on=True, changed=changed)
