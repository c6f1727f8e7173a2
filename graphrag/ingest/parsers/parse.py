"""One entry point for parsing: file bytes (or a stored file) and its kind to a `ParsedDocument`."""

from __future__ import annotations

from pathlib import Path

from graphrag.errors import EmptyFileError
from graphrag.ingest.models import FileType, PageProgress, ParsedDocument
from graphrag.ingest.parsers.captioning import Captioner
from graphrag.ingest.parsers.decode_budgets import apply_pillow_limit, check_docx_archive
from graphrag.ingest.parsers.docx import parse_docx
from graphrag.ingest.parsers.image import parse_image
from graphrag.ingest.parsers.pdf import parse_pdf
from graphrag.ingest.parsers.text import parse_html, parse_plain_text
from graphrag.settings import IngestSettings

__all__ = ["parse_file"]


def parse_file(
    source: bytes | Path,
    file_type: FileType,
    settings: IngestSettings,
    captioner: Captioner | None = None,
    on_page: PageProgress | None = None,
) -> ParsedDocument:
    """Parse a document whose kind was already established by `detect_file_type`.

    `captioner` adds image captions when a vision model is configured; None means OCR only.
    `on_page(done, total)` is called after each page of paged formats (PDF, image frames).
    Raises EmptyFileError, CorruptFileError, EncryptedFileError or DecodeBudgetError.
    """
    data = source.read_bytes() if isinstance(source, Path) else source
    if not data:
        raise EmptyFileError("the file is empty")
    apply_pillow_limit(settings)
    if file_type is FileType.PDF:
        return parse_pdf(data, settings, captioner, on_page)
    if file_type.is_image:
        return parse_image(data, file_type, settings, captioner, on_page)
    if file_type is FileType.DOCX:
        check_docx_archive(data, settings)
        return parse_docx(data)
    if file_type is FileType.HTML:
        return parse_html(data, settings)
    return parse_plain_text(data, file_type)
