"""File kinds told by content and checked against names and declared types; safe file names."""

from __future__ import annotations

import io
import unicodedata
import zipfile
from typing import Any

import docx
import pymupdf as _pymupdf
import pytest
from PIL import Image

from graphrag.errors import EmptyFileError, UnsupportedMediaError
from graphrag.ingest.file_names import FALLBACK_FILE_NAME, safe_file_name
from graphrag.ingest.models import FileType
from graphrag.ingest.parsers.file_types import detect_file_type

pytestmark = pytest.mark.unit

# PyMuPDF ships partial annotations (many functions untyped): used as Any in these tests.
pymupdf: Any = _pymupdf

RATIO = 0.01
MAX_NAME = 40
MAX_BYTES = 255


def _pdf() -> bytes:
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), "hello")
    return bytes(document.tobytes())


def _image(fmt: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(buffer, format=fmt)
    return buffer.getvalue()


def _docx() -> bytes:
    document = docx.Document()
    document.add_paragraph("hello")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.txt", "not a word document")
    return buffer.getvalue()


def _detect(data: bytes, name: str | None = None, media: str | None = None) -> FileType:
    return detect_file_type(data, file_name=name, media_type=media, max_control_ratio=RATIO)


@pytest.mark.parametrize(
    ("data", "name", "media", "expected"),
    [
        (_pdf(), "report.pdf", "application/pdf", FileType.PDF),
        (_image("PNG"), "shot.PNG", "image/png", FileType.PNG),
        (_image("JPEG"), "photo.jpg", "image/jpeg", FileType.JPEG),
        (_image("TIFF"), "scan.tif", "image/tiff", FileType.TIFF),
        (_docx(), "memo.docx", None, FileType.DOCX),
        (b"<!DOCTYPE html><html><body>hi</body></html>", "page.htm", "text/html", FileType.HTML),
        (b"# Title\n\nSome *markdown*.", "notes.md", "text/plain", FileType.MARKDOWN),
        (b"plain words", "a.txt", "text/plain; charset=utf-8", FileType.TXT),
    ],
)
def test_detects_every_supported_kind(
    data: bytes, name: str, media: str | None, expected: FileType
) -> None:
    assert _detect(data, name, media) is expected


def test_content_decides_without_any_claim() -> None:
    assert _detect(_pdf()) is FileType.PDF
    assert _detect(b"  <!-- hi -->\n<html><p>x</p></html>") is FileType.HTML
    assert _detect(b"just some words") is FileType.TXT
    assert _detect(_image("PNG"), "no_extension", "application/octet-stream") is FileType.PNG


def test_text_claims_choose_between_text_kinds() -> None:
    assert _detect(b"# heading", media="text/markdown") is FileType.MARKDOWN
    assert _detect(b"<p>fragment</p>", "frag.html") is FileType.HTML
    assert _detect(b"<html><body>x</body></html>", "page.txt") is FileType.TXT


def test_legacy_and_utf16_text_are_text() -> None:
    assert _detect("café crème".encode("cp1252"), "fr.txt") is FileType.TXT
    assert _detect("naïve".encode("utf-16"), "u16.txt") is FileType.TXT


@pytest.mark.parametrize(
    ("data", "name", "media"),
    [
        (_image("PNG"), "invoice.pdf", None),  # disguised PNG
        (_pdf(), "doc.pdf", "image/png"),  # declared type contradicts the content
        (b"plain text", "fake.pdf", None),
        (_image("JPEG"), "x.png", None),  # even image kinds must agree
        (_docx(), "memo.txt", None),
        (b"plain text", "script.exe", None),  # extension we do not ingest
        (b"plain text", None, "application/x-sh"),  # content type we do not ingest
        (_zip(), "archive.zip", None),
        (_zip(), "renamed.docx", None),  # a ZIP without word/document.xml is no DOCX
        (bytes(range(256)) * 8, "blob.txt", None),  # binary with NULs
        (b"text\x01\x02\x03\x04\x05\x06with controls", "c.txt", None),
    ],
)
def test_refuses_mismatched_unknown_or_binary(
    data: bytes, name: str | None, media: str | None
) -> None:
    with pytest.raises(UnsupportedMediaError):
        _detect(data, name, media)


@pytest.mark.parametrize("data", [b"", b"   \n\t\r\n  "])
def test_empty_files_are_refused(data: bytes) -> None:
    with pytest.raises(EmptyFileError):
        _detect(data, "empty.txt")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("../../etc/passwd", "passwd"),
        ("..\\..\\windows\\win.ini", "win.ini"),
        ("/var/data/report.pdf", "report.pdf"),
        ("C:\\Users\\me\\cv.docx", "cv.docx"),
        ("a\x00b.pdf", "ab.pdf"),
        ("line\nbreak.txt", "linebreak.txt"),
        ("evil\u202egpj.exe", "evilgpj.exe"),
        ('a:b*c?"d<e>f|g.txt', "a_b_c__d_e_f_g.txt"),
        ("CON.txt", "_CON.txt"),
        ("lpt1", "_lpt1"),
        (".bashrc", "bashrc"),
        ("  spaced   out  .md ", "spaced out .md"),
        ("", FALLBACK_FILE_NAME),
        ("..", FALLBACK_FILE_NAME),
        ("../", FALLBACK_FILE_NAME),
        ("\x00\x01", FALLBACK_FILE_NAME),
        ("   ", FALLBACK_FILE_NAME),
        ("lone\ud800surrogate.txt", "lonesurrogate.txt"),
    ],
)
def test_safe_file_name_neutralises_hostile_names(raw: str, expected: str) -> None:
    assert safe_file_name(raw, MAX_NAME, MAX_BYTES) == expected


def test_safe_file_name_shortens_but_keeps_the_extension() -> None:
    name = safe_file_name("é" * 300 + ".pdf", MAX_NAME, MAX_BYTES)
    assert len(name) == MAX_NAME
    assert name.endswith(".pdf")
    assert name.startswith("é")


@pytest.mark.parametrize(
    ("raw", "extension"),
    [
        ("漢" * 300 + ".txt", ".txt"),  # 3 bytes a character: 902 bytes in all
        ("😀" * 300 + ".pdf", ".pdf"),  # 4 bytes
        ("é" + "漢" * 300 + ".docx", ".docx"),  # the cut falls inside a character otherwise
        ("漢" * 300, ""),
        ("漢" * 300 + "." + "字" * 10, "." + "字" * 10),  # a 31-byte extension is kept
    ],
)
def test_safe_file_name_fits_the_byte_limit_between_characters(raw: str, extension: str) -> None:
    name = safe_file_name(raw, 200, MAX_BYTES)
    encoded = name.encode("utf-8")  # would raise on a lone surrogate
    assert MAX_BYTES - 4 < len(encoded) <= MAX_BYTES
    assert encoded.decode("utf-8") == name
    assert name.endswith(extension) and raw.startswith(name[: -len(extension) or None])


def test_safe_file_name_byte_limit_applies_to_the_fallback() -> None:
    assert safe_file_name("..", MAX_NAME, 3, fallback="ééé") == "é"


@pytest.mark.parametrize(
    "raw",
    ["../" * 50 + "x" * 500, "\\\\server\\share\\..\\a.txt", "./.\u200b./b", "\x7f" * 3 + "z"],
)
def test_safe_file_name_invariants(raw: str) -> None:
    name = safe_file_name(raw, MAX_NAME, MAX_BYTES)
    assert name
    assert len(name) <= MAX_NAME
    assert "/" not in name and "\\" not in name
    assert not name.startswith(".")
    assert all(unicodedata.category(char) not in ("Cc", "Cf") for char in name)
