"""One image to an `ImageText`: its OCR text and, when a captioner is wired, its caption."""

from __future__ import annotations

from graphrag.ingest.models import ImageSource, ImageText
from graphrag.ingest.parsers.captioning import Captioner
from graphrag.ingest.parsers.ocr import ocr_image
from graphrag.settings import IngestSettings

__all__ = ["PNG_MEDIA_TYPE", "read_image"]

PNG_MEDIA_TYPE = "image/png"


def read_image(
    image: bytes,
    source: ImageSource,
    settings: IngestSettings,
    captioner: Captioner | None,
    *,
    media_type: str = PNG_MEDIA_TYPE,
) -> ImageText:
    """OCR `image` with the configured languages and timeout; caption it if a captioner is set.

    A scanned page rendered whole is not captioned: its words are the OCR's, and "a page of
    text" describes nothing.
    """
    result = ocr_image(image, languages=settings.ocr_languages, timeout_s=settings.ocr_timeout_s)
    caption = None
    if captioner is not None and source is not ImageSource.PAGE_RENDER:
        caption = captioner.caption(image, media_type=media_type)
    return ImageText(
        source=source,
        ocr_text=result.text,
        ocr_failed=result.failed,
        caption=caption.strip() if caption else None,
    )
