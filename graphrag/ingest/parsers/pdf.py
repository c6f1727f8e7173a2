"""PDF pages to text blocks in reading order, with OCR of scanned pages and of embedded images.

A page is scanned when its text layer is (nearly) empty or images cover most of it: the whole
page is then rendered and OCR'd. On other pages, each embedded image large enough to hold text
is OCR'd on its own. Pages are handled one at a time so memory and time stay per page.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pymupdf as _pymupdf

from graphrag.errors import CorruptFileError, DecodeBudgetError, EncryptedFileError
from graphrag.ingest.models import (
    FileType,
    ImageSource,
    ImageText,
    PageProgress,
    ParsedDocument,
    ParsedPage,
)
from graphrag.ingest.parsers.captioning import Captioner
from graphrag.ingest.parsers.image_reading import read_image
from graphrag.ingest.parsers.text_decoding import clean_text
from graphrag.settings import IngestSettings

__all__ = ["parse_pdf"]

logger = logging.getLogger(__name__)

# PyMuPDF's annotations are partial (many functions untyped), so it is handled as Any here.
pymupdf: Any = _pymupdf

# PDF user space has 72 points per inch; render sizes in pixels follow from dpi / 72.
_POINTS_PER_INCH = 72.0
_TEXT_BLOCK = 0
# Errors PyMuPDF raises on damaged files: FileDataError is a RuntimeError; the MuPDF layer has
# its own base class.
_PDF_ERRORS: tuple[type[BaseException], ...] = (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase)


@contextmanager
def _open_pdf(data: bytes, max_pages: int) -> Iterator[Any]:
    try:
        document = pymupdf.open(stream=data, filetype="pdf")
    except _PDF_ERRORS as exc:
        raise CorruptFileError(f"the PDF cannot be read: {exc}") from exc
    try:
        if document.needs_pass:
            raise EncryptedFileError("the PDF is password-protected")
        if document.page_count == 0:
            raise CorruptFileError("the PDF has no readable page")
        if document.page_count > max_pages:
            raise DecodeBudgetError(
                f"the PDF has {document.page_count} pages (at most {max_pages})"
            )
        yield document
    finally:
        document.close()


def _render_dpi(rect: Any, settings: IngestSettings) -> int:
    """The configured dpi, lowered when the page is so large that the render would be huge."""
    area_sq_in = max(rect.width * rect.height, 1.0) / (_POINTS_PER_INCH**2)
    cap = math.sqrt(settings.ocr_max_pixels / area_sq_in)
    return max(1, min(settings.ocr_dpi, int(cap)))


def _render_page(page: Any, settings: IngestSettings) -> bytes:
    pixmap = page.get_pixmap(
        dpi=_render_dpi(page.rect, settings), colorspace=pymupdf.csGRAY, alpha=False
    )
    return bytes(pixmap.tobytes("png"))


def _image_coverage(page: Any, infos: list[dict[str, Any]]) -> float:
    """Share of the page area under images (overlaps counted twice, capped at 1)."""
    page_area = float(abs(page.rect))
    if page_area <= 0:
        return 0.0
    covered = 0.0
    for info in infos:
        box = pymupdf.Rect(info["bbox"]) & page.rect
        if not box.is_empty and not box.is_infinite:
            covered += float(abs(box))
    return min(1.0, covered / page_area)


def _image_png(document: Any, xref: int, settings: IngestSettings) -> bytes:
    pixmap = pymupdf.Pixmap(document, xref)
    if pixmap.colorspace is None or pixmap.colorspace.n > 3:
        # Stencil masks and CMYK/DeviceN images become RGB so PNG can hold them.
        pixmap = pymupdf.Pixmap(pymupdf.csRGB, pixmap)
    if pixmap.alpha:
        pixmap = pymupdf.Pixmap(pixmap, 0)
    if pixmap.width * pixmap.height > settings.ocr_max_pixels:
        ratio = pixmap.width * pixmap.height / settings.ocr_max_pixels
        pixmap.shrink(math.ceil(math.log(ratio, 4)))  # each step halves both sides
    return bytes(pixmap.tobytes("png"))


def _embedded_images(
    document: Any,
    infos: list[dict[str, Any]],
    settings: IngestSettings,
    captioner: Captioner | None,
) -> tuple[list[ImageText], int]:
    """OCR of the page's distinct images big enough to hold text; also how many were skipped."""
    images: list[ImageText] = []
    skipped = 0
    seen: set[int] = set()
    for info in infos:
        xref = int(info.get("xref", 0))
        width, height = int(info.get("width", 0)), int(info.get("height", 0))
        if xref in seen or min(width, height) < settings.min_image_side_px:
            continue
        seen.add(xref)
        # Inline images have no xref to load from; over the cap we stop spending OCR time; an
        # image whose declared size is over the pixel budget is never decoded.
        if (
            xref == 0
            or len(images) >= settings.ocr_max_images_per_page
            or width * height > settings.image_max_pixels
        ):
            skipped += 1
            continue
        try:
            png = _image_png(document, xref, settings)
        except _PDF_ERRORS as exc:
            # One undecodable picture should not fail a page whose text is readable.
            logger.warning("embedded image xref %s cannot be decoded: %s", xref, exc)
            skipped += 1
            continue
        images.append(read_image(png, ImageSource.EMBEDDED_IMAGE, settings, captioner))
    return images, skipped


def _parse_page(
    document: Any,
    index: int,
    settings: IngestSettings,
    captioner: Captioner | None,
    ocr_allowed: bool,
) -> ParsedPage:
    """One page's text; OCR only while the document's OCR page budget lasts (`ocr_allowed`)."""
    page = document.load_page(index)
    blocks = [
        clean_text(block[4]).strip()
        for block in page.get_text("blocks", sort=True)
        if block[6] == _TEXT_BLOCK
    ]
    blocks = [block for block in blocks if block]
    infos = page.get_image_info(xrefs=True)
    coverage = _image_coverage(page, infos)
    text_chars = sum(len(block) for block in blocks)
    scanned = text_chars < settings.scanned_min_chars or coverage >= settings.scanned_image_coverage
    if not ocr_allowed:
        # Past the budget, the page render or the page's pictures are counted, not read.
        images, skipped = [], (1 if scanned else len(infos))
    elif scanned:
        render = _render_page(page, settings)
        images = [read_image(render, ImageSource.PAGE_RENDER, settings, captioner)]
        skipped = 0
    else:
        images, skipped = _embedded_images(document, infos, settings, captioner)
    return ParsedPage(
        number=index + 1,
        blocks=blocks,
        images=images,
        scanned=scanned,
        image_coverage=coverage,
        images_skipped=skipped,
    )


def parse_pdf(
    data: bytes,
    settings: IngestSettings,
    captioner: Captioner | None = None,
    on_page: PageProgress | None = None,
) -> ParsedDocument:
    """Parse a PDF page by page; raises EncryptedFileError or CorruptFileError when it cannot.

    A damaged file that MuPDF could rebuild is kept (`repaired=True`) if any text survived.
    """
    pages: list[ParsedPage] = []
    ocr_pages = 0
    with _open_pdf(data, settings.pdf_max_pages) as document:
        total = document.page_count
        for index in range(total):
            try:
                page = _parse_page(
                    document, index, settings, captioner, ocr_pages < settings.ocr_max_pages
                )
            except _PDF_ERRORS as exc:
                message = f"page {index + 1} of the PDF cannot be read: {exc}"
                raise CorruptFileError(message) from exc
            pages.append(page)
            ocr_pages += bool(page.images)
            if on_page is not None:
                on_page(index + 1, total)
        repaired = bool(document.is_repaired)
    parsed = ParsedDocument(file_type=FileType.PDF, pages=pages, repaired=repaired)
    if repaired and parsed.stats.text_chars == 0 and parsed.stats.ocr_chars == 0:
        # MuPDF rebuilds damaged files (a truncated upload); when nothing readable survives,
        # failing says more than a "completed" document without a single chunk.
        raise CorruptFileError("the PDF is damaged (truncated?): no text could be recovered")
    return parsed
