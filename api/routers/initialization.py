"""Admin previews for setting up extraction: try labels on a text, get a sample text or labels.

All need the `manage_models` capability and call the LLM once, through the interactive slots
and with at most `previews.max_tokens`; a failing model is 503 `llm_unavailable`, no free slot
in time 503 `llm_busy` with Retry-After.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from api.auth import ModelManagerDep
from api.deps import AppStateDep
from graphrag.extraction.previews import (
    ExtractionPreview,
    SampleText,
    SampleTextRequest,
    TagSuggestionRequest,
    TagSuggestions,
    TextRelationRequest,
    preview_relations,
    suggest_tags,
    write_sample_text,
)

router = APIRouter(prefix="/api/v1/initialization/extract", tags=["initialization"])


def _error(description: str, code: str) -> dict[str, Any]:
    example = {"error": {"code": code, "message": description, "details": {}}}
    return {"description": description, "content": {"application/json": {"example": example}}}


_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: _error("missing, unknown or revoked API key", "unauthorized"),
    403: _error("the key lacks the manage_models capability", "forbidden"),
    422: _error("the text has 5001 characters; the limit is 5000 characters", "invalid_input"),
    503: _error("the LLM server failed (llm_busy: no interactive slot in time)", "llm_unavailable"),
}


@router.post("/text-relation", responses=_RESPONSES)
def extract_text_relations(
    body: TextRelationRequest, state: AppStateDep, _: ModelManagerDep
) -> ExtractionPreview:
    """Entities and relations the model reads from `text` (at most 5000 characters by default),
    with the same prompt and parser as ingestion; relations whose type is not in `tags` are
    removed. Nothing is stored."""
    settings = state.settings
    return preview_relations(state.llm, settings.extraction, settings.previews, body)


@router.post("/fabri-text", responses=_RESPONSES)
def fabricate_text(body: SampleTextRequest, state: AppStateDep, _: ModelManagerDep) -> SampleText:
    """A sample passage written by the model to illustrate the given relation labels."""
    settings = state.settings
    return write_sample_text(state.llm, settings.extraction, settings.previews, body)


@router.post("/fabri-tag", responses=_RESPONSES)
def fabricate_tags(
    body: TagSuggestionRequest, state: AppStateDep, _: ModelManagerDep
) -> TagSuggestions:
    """Relation labels the model suggests for `text`, to seed an extraction config's tags."""
    settings = state.settings
    return suggest_tags(state.llm, settings.extraction, settings.previews, body)
