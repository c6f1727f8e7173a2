"""Typed values that flow through ingestion: file kinds, parsed pages, chunk drafts and kinds."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from pydantic import BaseModel, Field, computed_field

__all__ = [
    "ChunkDraft",
    "ChunkType",
    "DocumentStats",
    "FileType",
    "ImageSource",
    "ImageText",
    "PageProgress",
    "ParsedDocument",
    "ParsedPage",
]

# Called after each page with (pages done, pages in total) so long parses can report progress.
PageProgress = Callable[[int, int], None]


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


class FileType(StrEnum):
    """The document kinds ingestion accepts, as told by their content."""

    PDF = "pdf"
    PNG = "png"
    JPEG = "jpeg"
    TIFF = "tiff"
    DOCX = "docx"
    HTML = "html"
    MARKDOWN = "markdown"
    TXT = "txt"

    @property
    def is_image(self) -> bool:
        return self in (FileType.PNG, FileType.JPEG, FileType.TIFF)

    @property
    def is_text(self) -> bool:
        return self in (FileType.HTML, FileType.MARKDOWN, FileType.TXT)


class ImageSource(StrEnum):
    """Where OCR'd pixels came from."""

    PAGE_RENDER = "page_render"  # a whole scanned page rendered to an image
    EMBEDDED_IMAGE = "embedded_image"  # a picture inside a page that also has text
    IMAGE_FILE = "image_file"  # an uploaded PNG/JPEG/TIFF (one frame)


class ImageText(BaseModel):
    """What one image on a page yielded: OCR text and, when a vision model is set, a caption."""

    model_config = {"frozen": True}

    source: ImageSource
    ocr_text: str = ""
    ocr_failed: bool = False
    caption: str | None = None


class ParsedPage(BaseModel):
    """One page (or the single body of an unpaged document) with its text blocks in reading order.

    `number` is 1-based for paged formats (PDF pages, image frames) and None for flowing text
    (TXT, Markdown, HTML, DOCX). `scanned` says the page was rendered and OCR'd as a whole.
    """

    model_config = {"frozen": True}

    number: int | None = Field(default=None, ge=1)
    blocks: list[str] = Field(default_factory=list)
    images: list[ImageText] = Field(default_factory=list)
    scanned: bool = False
    image_coverage: float = Field(default=0.0, ge=0.0, le=1.0)
    images_skipped: int = Field(default=0, ge=0)

    @property
    def text(self) -> str:
        """The page text that chunk offsets refer to: blocks joined by blank lines."""
        return "\n\n".join(self.blocks)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented computed_field usage
    @property
    def text_chars(self) -> int:
        return sum(len(block.strip()) for block in self.blocks)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented computed_field usage
    @property
    def ocr_chars(self) -> int:
        return sum(len(image.ocr_text.strip()) for image in self.images)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented computed_field usage
    @property
    def empty_after_ocr(self) -> bool:
        """A scanned page from which neither the text layer nor OCR got anything."""
        return self.scanned and self.text_chars == 0 and self.ocr_chars == 0


class CaptionStats(BaseModel):
    """What captioning did for one document (see `ingest.parsers.captioning`)."""

    captioned: int = 0
    failed: int = 0
    skipped: int = 0  # images beyond `ingest.caption_max_images`


class DocumentStats(BaseModel):
    """Counts kept on the document so that a page yielding nothing is visible, not hidden."""

    model_config = {"frozen": True}

    page_count: int
    text_chars: int
    ocr_chars: int
    scanned_pages: list[int]
    empty_pages: list[int]
    ocr_failures: int
    images_ocr: int
    images_skipped: int
    repaired: bool
    images_captioned: int = 0
    captions_failed: int = 0
    captions_skipped: int = 0


class ParsedDocument(BaseModel):
    """A parsed file: its kind and its pages in order."""

    model_config = {"frozen": True}

    file_type: FileType
    pages: list[ParsedPage]
    repaired: bool = False  # the file was damaged and rebuilt by the parser (PDF)
    captions: CaptionStats = Field(default_factory=CaptionStats)

    @property
    def stats(self) -> DocumentStats:
        """Per-document totals; page lists hold 1-based page numbers (unpaged bodies count as 1)."""
        numbers = [page.number or index for index, page in enumerate(self.pages, start=1)]
        return DocumentStats(
            page_count=len(self.pages),
            text_chars=sum(page.text_chars for page in self.pages),
            ocr_chars=sum(page.ocr_chars for page in self.pages),
            scanned_pages=[n for n, page in zip(numbers, self.pages, strict=True) if page.scanned],
            empty_pages=[
                n for n, page in zip(numbers, self.pages, strict=True) if page.empty_after_ocr
            ],
            ocr_failures=sum(image.ocr_failed for page in self.pages for image in page.images),
            images_ocr=sum(len(page.images) for page in self.pages),
            images_skipped=sum(page.images_skipped for page in self.pages),
            repaired=self.repaired,
            images_captioned=self.captions.captioned,
            captions_failed=self.captions.failed,
            captions_skipped=self.captions.skipped,
        )
