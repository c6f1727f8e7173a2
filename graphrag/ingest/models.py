"""Typed values that flow through ingestion: parsed pages, chunk drafts and their kinds."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

__all__ = ["ChunkDraft", "ChunkType"]


class ChunkType(StrEnum):
    """What a chunk holds: body text, text read from an image, or a model's caption of an image."""

    TEXT = "text"
    IMAGE_OCR = "image_ocr"
    IMAGE_CAPTION = "image_caption"


class ChunkDraft(BaseModel):
    """A chunk before it is stored: position in the document and its parent for sub-chunks.

    `parent_seq` is the `seq` of the text chunk a sub-chunk (OCR, caption) belongs to.
    """

    model_config = {"frozen": True}

    seq: int = Field(ge=0)
    chunk_type: ChunkType
    content: str
    page: int | None = None
    start_offset: int = Field(ge=0, default=0)
    end_offset: int = Field(ge=0, default=0)
    parent_seq: int | None = None
