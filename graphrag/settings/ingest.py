"""Settings of ingestion: chunking, parsers and their caps, OCR, URL import, captions."""

from __future__ import annotations

from pydantic import Field, field_validator

from graphrag.settings.base import Section as _Section
from graphrag.settings.base import parse_network_port

__all__ = ["IngestSettings"]


class IngestSettings(_Section):
    chunk_size: int
    chunk_overlap: int
    separators: list[str]
    ocr_languages: str
    ocr_dpi: int
    ocr_timeout_s: float
    scanned_min_chars: int
    scanned_image_coverage: float
    min_image_side_px: int
    url_allow_private: bool
    url_allowed_private: list[str] = Field(
        description="non-public address[:port] blocks a URL import may reach"
    )
    url_timeout_s: float = Field(gt=0.0)
    url_total_timeout_s: float = Field(gt=0.0)
    url_max_redirects: int = Field(ge=0)
    url_max_concurrent: int = Field(gt=0, description="URL fetches at once in one API process")
    url_max_concurrent_per_key: int = Field(gt=0, description="of those, for one API key")
    url_dns_threads: int = Field(gt=0, description="threads resolving URL hosts, per process")
    stuck_after_s: int
    reconcile_interval_s: int
    purge_batch_rows: int = Field(gt=0, description="rows one committed DELETE of a purge removes")
    vision_model: str | None = Field(
        description="an OpenAI-compatible vision model on the LLM server; None: no captions"
    )
    caption_max_images: int = Field(ge=0, description="images captioned per document")
    caption_max_tokens: int = Field(gt=0, description="length of one caption, in tokens")
    caption_timeout_s: float = Field(gt=0.0, description="one caption request")
    caption_max_chars: int = Field(gt=0, description="a caption is cut to this many characters")
    file_name_max_chars: int = Field(gt=0)
    file_name_max_bytes: int = Field(gt=0, le=255, description="UTF-8 bytes of a stored file name")
    ocr_max_pixels: int
    ocr_max_images_per_page: int
    max_control_char_ratio: float
    max_deliveries: int = Field(gt=0)
    max_requeues: int = Field(gt=0)
    docx_max_entries: int = Field(gt=0)
    docx_max_entry_bytes: int = Field(gt=0)
    docx_max_total_bytes: int = Field(gt=0)
    docx_max_ratio: float = Field(gt=1)
    docx_ratio_min_bytes: int = Field(ge=0)
    html_max_bytes: int = Field(gt=0, description="one HTML page, before it is parsed")
    html_max_depth: int = Field(gt=0, description="elements open at once in an HTML page")
    image_max_pixels: int = Field(gt=0)
    tiff_max_frames: int = Field(gt=0)
    pdf_max_pages: int = Field(gt=0)
    ocr_max_pages: int = Field(ge=0)
    graph_max_chunks: int = Field(gt=0)
    chunk_size_min: int = Field(gt=1)
    chunk_size_max: int = Field(gt=1)
    max_separators: int = Field(gt=0)
    max_separator_chars: int = Field(gt=0)

    @field_validator("url_allowed_private")
    @classmethod
    def _valid_targets(cls, entries: list[str]) -> list[str]:
        for entry in entries:
            parse_network_port(entry)
        return entries
