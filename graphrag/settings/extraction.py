"""Settings of knowledge-graph extraction and of its admin previews."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from graphrag.settings.base import Section as _Section

__all__ = ["ExtractionSettings", "PreviewSettings"]


class ExtractionSettings(_Section):
    """Knowledge-graph extraction: parser caps, tag policy, limits of a KB's ExtractConfig."""

    keep_relations_outside_tags: bool
    name_vectors: bool
    max_name_chars: int = Field(gt=0)
    max_attributes_per_node: int = Field(ge=0)
    max_nodes_per_chunk: int = Field(gt=0)
    max_relations_per_chunk: int = Field(ge=0)
    max_tags: int = Field(ge=0)
    max_example_text_chars: int = Field(ge=0)
    max_custom_instructions_chars: int = Field(ge=0)
    placeholder_names: list[str]
    trace_sample: int = Field(ge=0)
    prompt_templates_dir: Path


class PreviewSettings(_Section):
    """The admin extraction previews (`/api/v1/initialization/extract/...`)."""

    max_text_chars: int = Field(gt=0)
    max_suggested_tags: int = Field(gt=0)
    max_tokens: int = Field(gt=0)
