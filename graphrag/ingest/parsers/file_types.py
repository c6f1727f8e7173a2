"""The real kind of an upload, told by its bytes and checked against its name and declared type.

Binary kinds are recognised by their signatures (a DOCX is a ZIP holding `word/document.xml`).
Text cannot tell Markdown from plain text, so for text content the claim decides between TXT,
Markdown and HTML; with no claim, content that opens like an HTML page is HTML, else TXT.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from graphrag.errors import EmptyFileError, UnsupportedMediaError
from graphrag.ingest.models import FileType
from graphrag.ingest.parsers.decode_budgets import check_docx_entries
from graphrag.ingest.parsers.text_decoding import decode_text, looks_like_text
from graphrag.ingest.parsers.zip_directory import entry_names, find_directory
from graphrag.text_scan import ascii_lower, skip_spaces

__all__ = [
    "detect_file_type",
    "file_type_from_media_type",
    "file_type_from_name",
    "sniff_content",
]

_EXTENSIONS: dict[str, FileType] = {
    ".pdf": FileType.PDF,
    ".png": FileType.PNG,
    ".jpg": FileType.JPEG,
    ".jpeg": FileType.JPEG,
    ".jpe": FileType.JPEG,
    ".tif": FileType.TIFF,
    ".tiff": FileType.TIFF,
    ".docx": FileType.DOCX,
    ".html": FileType.HTML,
    ".htm": FileType.HTML,
    ".xhtml": FileType.HTML,
    ".md": FileType.MARKDOWN,
    ".markdown": FileType.MARKDOWN,
    ".txt": FileType.TXT,
    ".text": FileType.TXT,
}
_MEDIA_TYPES: dict[str, FileType] = {
    "application/pdf": FileType.PDF,
    "image/png": FileType.PNG,
    "image/jpeg": FileType.JPEG,
    "image/jpg": FileType.JPEG,
    "image/pjpeg": FileType.JPEG,
    "image/tiff": FileType.TIFF,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": FileType.DOCX,
    "text/html": FileType.HTML,
    "application/xhtml+xml": FileType.HTML,
    "text/markdown": FileType.MARKDOWN,
    "text/x-markdown": FileType.MARKDOWN,
    "text/plain": FileType.TXT,
}
# Types that say nothing about the content: clients send them when they do not know.
_GENERIC_MEDIA_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream"})

_PDF_MAGIC = b"%PDF-"
# PDF readers accept the header anywhere in the first kilobyte (junk before it is common).
_PDF_HEADER_WINDOW = 1024
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8\xff"
_TIFF_MAGICS = (b"II*\x00", b"MM\x00*")
_ZIP_MAGIC = b"PK\x03\x04"
_DOCX_MAIN_PART = b"word/document.xml"
# How much of a text upload is inspected for an HTML opening; enough for a doctype and comments.
_HTML_SNIFF_CHARS = 2048
_COMMENT_OPEN, _COMMENT_CLOSE = "<!--", "-->"
_DOCTYPE = "!doctype"
_HTML_ROOTS = ("html", "head", "body")


def file_type_from_name(file_name: str) -> FileType | None:
    """The kind a file name claims through its extension; None when it has no extension.

    Raises UnsupportedMediaError for an extension we do not ingest.
    """
    suffix = PurePosixPath(file_name.replace("\\", "/")).suffix.lower()
    if not suffix:
        return None
    kind = _EXTENSIONS.get(suffix)
    if kind is None:
        raise UnsupportedMediaError(f"files ending in {suffix!r} are not supported", name=file_name)
    return kind


def file_type_from_media_type(media_type: str) -> FileType | None:
    """The kind a declared content type claims; None for generic types (octet-stream, empty).

    Raises UnsupportedMediaError for a specific type we do not ingest.
    """
    essence = media_type.split(";", 1)[0].strip().lower()
    if essence in _GENERIC_MEDIA_TYPES:
        return None
    kind = _MEDIA_TYPES.get(essence)
    if kind is None:
        raise UnsupportedMediaError(f"content type {essence!r} is not supported")
    return kind


def _word_ends(text: str, pos: int) -> bool:
    return pos >= len(text) or not (text[pos].isalnum() or text[pos] == "_")


def _opens_like_html(head: str) -> bool:
    """Whether `head` starts, after blanks and comments, with a doctype or an html/head/body tag.

    Scanned forward once (a backtracking regex over repeated comments took exponential time).
    """
    text = ascii_lower(head)
    pos = skip_spaces(text, 0)
    while text.startswith(_COMMENT_OPEN, pos):
        close = text.find(_COMMENT_CLOSE, pos + len(_COMMENT_OPEN))
        if close < 0:
            return False
        pos = skip_spaces(text, close + len(_COMMENT_CLOSE))
    if not text.startswith("<", pos):
        return False
    pos += 1
    if text.startswith(_DOCTYPE, pos):
        after = pos + len(_DOCTYPE)
        name = skip_spaces(text, after)
        root = _HTML_ROOTS[0]
        return name > after and text.startswith(root, name) and _word_ends(text, name + len(root))
    return any(text.startswith(n, pos) and _word_ends(text, pos + len(n)) for n in _HTML_ROOTS)


def _is_docx(data: bytes, max_entries: int | None) -> bool:
    """Whether the ZIP's directory names the main part of a Word document; with `max_entries`,
    an archive of more files is refused first (DecodeBudgetError), its records left unread."""
    directory = find_directory(data)
    if directory is None:
        return False
    if max_entries is not None:
        check_docx_entries(data, directory, max_entries)
    # The records are walked without being kept: the main part usually comes in the first few.
    return any(name == _DOCX_MAIN_PART for name in entry_names(data, directory))


def sniff_content(
    data: bytes, max_control_ratio: float, docx_max_entries: int | None = None
) -> FileType | None:
    """The kind the bytes themselves show: a binary kind, HTML or TXT for text, else None.

    A ZIP of more than `docx_max_entries` files raises DecodeBudgetError (None: not counted
    here; the worker counts before it reads the archive).
    """
    if _PDF_MAGIC in data[:_PDF_HEADER_WINDOW]:
        return FileType.PDF
    if data.startswith(_PNG_MAGIC):
        return FileType.PNG
    if data.startswith(_JPEG_MAGIC):
        return FileType.JPEG
    if data.startswith(_TIFF_MAGICS):
        return FileType.TIFF
    if data.startswith(_ZIP_MAGIC):
        return FileType.DOCX if _is_docx(data, docx_max_entries) else None
    if not looks_like_text(data, max_control_ratio):
        return None
    head = decode_text(data[: _HTML_SNIFF_CHARS * 4])[:_HTML_SNIFF_CHARS]
    return FileType.HTML if _opens_like_html(head) else FileType.TXT


def _claims(file_name: str | None, media_type: str | None) -> list[FileType]:
    claims: list[FileType] = []
    if file_name:
        from_name = file_type_from_name(file_name)
        if from_name is not None:
            claims.append(from_name)
    if media_type:
        from_media = file_type_from_media_type(media_type)
        if from_media is not None:
            claims.append(from_media)
    return claims


def detect_file_type(
    data: bytes,
    *,
    file_name: str | None = None,
    media_type: str | None = None,
    max_control_ratio: float,
    docx_max_entries: int | None = None,
) -> FileType:
    """The kind of an upload, from its content, refused unless the name and type agree with it.

    Raises EmptyFileError for no bytes (or a text file holding only whitespace),
    UnsupportedMediaError for content we cannot recognise, an unsupported extension or content
    type, or a claim that contradicts the content (a `.pdf` holding a PNG), and
    DecodeBudgetError for a ZIP of more than `docx_max_entries` files.
    """
    if not data:
        raise EmptyFileError("the file is empty", name=file_name)
    claims = _claims(file_name, media_type)
    sniffed = sniff_content(data, max_control_ratio, docx_max_entries)
    if sniffed is None:
        raise UnsupportedMediaError("the file content is not a supported kind", name=file_name)
    if sniffed.is_text:
        if not decode_text(data).strip():
            raise EmptyFileError("the file holds only whitespace", name=file_name)
        mismatched = [claim for claim in claims if not claim.is_text]
        if mismatched:
            raise UnsupportedMediaError(
                f"the file is text but claims to be {mismatched[0].value}", name=file_name
            )
        # The extension is the most specific claim (text/plain is often sent for .md files).
        return claims[0] if claims else sniffed
    for claim in claims:
        if claim is not sniffed:
            raise UnsupportedMediaError(
                f"the content is {sniffed.value} but the file claims to be {claim.value}",
                name=file_name,
            )
    return sniffed
