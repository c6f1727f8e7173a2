"""How a knowledge base cuts its documents into chunks, and the bounds its chunking must respect."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field, model_validator

from graphrag.errors import InvalidInputError
from graphrag.settings import IngestSettings
from graphrag.text_input import Bounded, InputText, RequestModel

__all__ = ["ChunkingConfig", "check_chunking", "default_chunking"]


class ChunkingConfig(RequestModel):
    """How text is cut: sizes in characters, separators tried in order (coarsest first)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    chunk_size: int = Field(gt=0)
    chunk_overlap: int = Field(ge=0)
    separators: Annotated[list[InputText], Bounded("ingest.max_separators")] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> ChunkingConfig:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError("chunk_overlap must be smaller than chunk_size")
        if any(sep == "" for sep in self.separators):
            raise ValueError("separators must not be empty strings")
        return self


def check_chunking(config: ChunkingConfig, settings: IngestSettings) -> None:
    """Raise `InvalidInputError` when a base's chunking is outside the configured bounds: a tiny
    chunk size turns one document into a flood of chunks (and of graph extraction calls)."""
    problems: list[str] = []
    if not settings.chunk_size_min <= config.chunk_size <= settings.chunk_size_max:
        problems.append(
            f"chunk_size between {settings.chunk_size_min} and {settings.chunk_size_max}"
        )
    if len(config.separators) > settings.max_separators:
        problems.append(f"at most {settings.max_separators} separators")
    if any(len(sep) > settings.max_separator_chars for sep in config.separators):
        problems.append(f"separators of at most {settings.max_separator_chars} characters")
    if problems:
        raise InvalidInputError("chunking exceeds its limits: " + "; ".join(problems))


def default_chunking(settings: IngestSettings) -> ChunkingConfig:
    """The chunking of a base created without its own: the settings' defaults."""
    return ChunkingConfig(
        chunk_size=settings.chunk_size,
        chunk_overlap=settings.chunk_overlap,
        separators=list(settings.separators),
    )
