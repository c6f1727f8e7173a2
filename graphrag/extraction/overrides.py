"""A document's own extraction settings over its base's: the effective config its chunks use.

Each field left out (None) is the base's; a field given replaces the base's whole (tags are not
merged with the base's tags). The effective config is checked against the same caps as a
base's. A document may turn its graph off, or change what is extracted; it cannot turn on a
graph its base has off (the base's graph switch prepares Neo4j for the base).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field, ValidationError, model_validator

from graphrag.errors import ExtractOverrideError, InvalidInputError
from graphrag.extraction.models import (
    ExtractConfig,
    InputTextList,
    check_example_texts,
    check_extract_config,
)
from graphrag.graph.models import GraphNode, GraphRelation
from graphrag.settings import ExtractionSettings
from graphrag.text_input import Bounded, InputText, RequestModel

__all__ = ["ExtractOverride", "check_override", "effective_config", "override_from_json"]


class ExtractOverride(RequestModel):
    """A document's extraction settings; a field left out (null) is the base's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool | None = Field(
        default=None, description="false: no graph for this document (true needs the base's on)"
    )
    text: InputText | None = None
    tags: Annotated[InputTextList, Bounded("extraction.max_tags")] | None = None
    nodes: Annotated[list[GraphNode], Bounded("extraction.max_nodes_per_chunk")] | None = None
    relations: (
        Annotated[list[GraphRelation], Bounded("extraction.max_relations_per_chunk")] | None
    ) = None
    custom_instructions: InputText | None = None

    @model_validator(mode="after")
    def _storable_example(self) -> ExtractOverride:
        check_example_texts(self.nodes or [], self.relations or [])
        return self

    @property
    def is_empty(self) -> bool:
        """Whether every field is the base's."""
        return not self.model_dump(exclude_none=True)


def effective_config(base: ExtractConfig, override: ExtractOverride | None) -> ExtractConfig:
    """The base's config with the document's fields in place of the base's."""
    if override is None or override.is_empty:
        return base
    return ExtractConfig.model_validate(
        {**base.model_dump(), **override.model_dump(exclude_none=True)}
    )


def check_override(
    base: ExtractConfig, override: ExtractOverride, limits: ExtractionSettings
) -> ExtractConfig:
    """The effective config, checked (`ExtractOverrideError` when it cannot apply)."""
    if override.enabled and not base.enabled:
        raise ExtractOverrideError("a document cannot turn on extraction its base has off")
    merged = effective_config(base, override)
    try:
        check_extract_config(merged, limits)
    except InvalidInputError as exc:
        raise ExtractOverrideError(exc.message) from exc
    return merged


def override_from_json(text: str | None) -> ExtractOverride | None:
    """Settings sent as JSON text (an upload's form field); `ExtractOverrideError` naming the
    first problem when they are not valid."""
    if text is None or not text.strip():
        return None
    try:
        return ExtractOverride.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "extract_override"
        raise ExtractOverrideError(f"extract_override: {where}: {first['msg']}") from exc
