"""Budgets checked before a file is decoded, from what its headers declare.

A decompression bomb is refused from its archive directory or image header, so the worker never
holds the inflated bytes or pixels; what a header cannot say (OCR time) is bounded per document.
"""

from __future__ import annotations

import io
import zipfile

from PIL import Image

from graphrag.errors import CorruptFileError, DecodeBudgetError
from graphrag.ingest.parsers.zip_directory import CentralDirectory, entry_names, find_directory
from graphrag.settings import IngestSettings

__all__ = ["apply_pillow_limit", "check_docx_archive", "check_docx_entries", "check_pixels"]


def apply_pillow_limit(settings: IngestSettings) -> None:
    """Pillow's own bomb guard follows the settings (it refuses at twice the limit)."""
    Image.MAX_IMAGE_PIXELS = settings.image_max_pixels


def check_docx_entries(data: bytes, directory: CentralDirectory, max_entries: int) -> None:
    """Refuse an archive of more than `max_entries` files before `zipfile` reads its directory:
    from the count its end record declares, else by walking at most one record past the budget
    (the declared count may lie)."""
    if directory.declared_entries > max_entries:
        raise DecodeBudgetError(
            f"the DOCX archive holds {directory.declared_entries} files "
            f"(at most {max_entries}, ingest.docx_max_entries)"
        )
    for count, _ in enumerate(entry_names(data, directory), start=1):
        if count > max_entries:
            raise DecodeBudgetError(
                f"the DOCX archive holds more than {max_entries} files (ingest.docx_max_entries)"
            )


def check_docx_archive(data: bytes, settings: IngestSettings) -> None:
    """Refuse a DOCX whose entries would inflate beyond the budgets, from the zip directory only.

    The entry count is checked first, within its bound; then `zipfile` reads the directory.
    `zipfile` never inflates an entry past the size its directory declares, so checking the
    declared sizes bounds what python-docx can later read.
    """
    directory = find_directory(data)
    if directory is None:
        raise CorruptFileError("the DOCX document cannot be read: it has no zip directory")
    check_docx_entries(data, directory, settings.docx_max_entries)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError, EOFError) as exc:
        raise CorruptFileError(f"the DOCX document cannot be read: {exc}") from exc
    total = 0
    for entry in entries:
        size = entry.file_size
        total += size
        if size > settings.docx_max_entry_bytes:
            raise DecodeBudgetError(
                f"DOCX entry {entry.filename} would inflate to {size} bytes "
                f"(at most {settings.docx_max_entry_bytes})"
            )
        ratio = size / max(entry.compress_size, 1)
        if size > settings.docx_ratio_min_bytes and ratio > settings.docx_max_ratio:
            raise DecodeBudgetError(
                f"DOCX entry {entry.filename} inflates {ratio:.0f} times "
                f"(at most {settings.docx_max_ratio:.0f}): a decompression bomb"
            )
    if total > settings.docx_max_total_bytes:
        raise DecodeBudgetError(
            f"the DOCX archive would inflate to {total} bytes "
            f"(at most {settings.docx_max_total_bytes})"
        )


def check_pixels(width: int, height: int, settings: IngestSettings, what: str) -> None:
    """Refuse an image whose declared size is over the pixel budget, before it is decoded."""
    if width * height > settings.image_max_pixels:
        raise DecodeBudgetError(
            f"{what} of {width}x{height} pixels is over the budget "
            f"of {settings.image_max_pixels} pixels"
        )
