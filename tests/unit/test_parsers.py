"""Parsers on files generated here: text, scanned and mixed PDFs (real Tesseract), images, DOCX,
HTML, text; encrypted and corrupt files; and the chunks each document turns into."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docx
import pymupdf as _pymupdf
import pytest
from PIL import Image, ImageDraw, ImageFont

from graphrag.errors import CorruptFileError, EmptyFileError, EncryptedFileError
from graphrag.ingest.chunker import chunk_document
from graphrag.ingest.models import ChunkType, FileType, ImageSource, ParsedDocument
from graphrag.ingest.parsers.parse import parse_file
from graphrag.kb.chunking import default_chunking
from graphrag.settings import IngestSettings, get_settings

pytestmark = pytest.mark.unit

# PyMuPDF ships partial annotations (many functions untyped): used as Any in these tests.
pymupdf: Any = _pymupdf

FONT_PX = 56


@pytest.fixture(scope="module")
def ingest() -> IngestSettings:
    return get_settings().ingest


def _words_png(lines: list[str], width: int = 1400) -> bytes:
    """Black words on white, big enough for Tesseract to read without doubt."""
    font = ImageFont.load_default(size=FONT_PX)
    image = Image.new("L", (width, FONT_PX * 2 * len(lines) + FONT_PX), 255)
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(lines):
        draw.text((FONT_PX, FONT_PX // 2 + row * FONT_PX * 2), line, fill=0, font=font)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _pdf(*pages: Callable[[Any], None], **save: Any) -> bytes:
    document = pymupdf.open()
    for build in pages:
        build(document.new_page())
    return bytes(document.tobytes(**save))


def _text_page(*lines: str) -> Callable[[Any], None]:
    def build(page: Any) -> None:
        for row, line in enumerate(lines):
            page.insert_text((72, 72 + row * 18), line, fontsize=12)

    return build


def _scanned_page(png: bytes) -> Callable[[Any], None]:
    def build(page: Any) -> None:
        page.insert_image(page.rect, stream=png)

    return build


def _text_with_figure(png: bytes, icon: bytes) -> Callable[[Any], None]:
    def build(page: Any) -> None:
        _text_page("The figure below shows the quarterly sales of the company.")(page)
        page.insert_image(pymupdf.Rect(72, 300, 372, 400), stream=png)
        page.insert_image(pymupdf.Rect(400, 300, 416, 316), stream=icon)  # decoration

    return build


def _blank_page(page: Any) -> None:
    del page


def _ocr_words(text: str) -> str:
    return " ".join(text.lower().split())


@pytest.fixture(scope="module")
def scanned_pdf(ingest: IngestSettings) -> ParsedDocument:
    png = _words_png(["LIGHTHOUSE KEEPERS", "GUARD THE HARBOUR"])
    return parse_file(_pdf(_scanned_page(png)), FileType.PDF, ingest)


@pytest.fixture(scope="module")
def mixed_pdf(ingest: IngestSettings) -> ParsedDocument:
    figure = _words_png(["QUARTERLY FIGURES"], width=1000)
    icon = _tiny_png()
    scan = _words_png(["ORCHARD APPLES", "RIPEN IN AUTUMN"])
    data = _pdf(_text_with_figure(figure, icon), _scanned_page(scan), _blank_page)
    return parse_file(data, FileType.PDF, ingest)


def _tiny_png() -> bytes:
    buffer = io.BytesIO()
    Image.new("L", (20, 20), 0).save(buffer, format="PNG")
    return buffer.getvalue()


def test_text_pdf_keeps_pages_order_and_offsets(ingest: IngestSettings) -> None:
    data = _pdf(
        _text_page("Alpha page opens the report.", "It has a second line."),
        _text_page("Beta page continues the story."),
        _text_page("Gamma page closes it."),
    )
    progress: list[tuple[int, int]] = []
    parsed = parse_file(data, FileType.PDF, ingest, on_page=lambda d, t: progress.append((d, t)))
    assert progress == [(1, 3), (2, 3), (3, 3)]
    assert [page.number for page in parsed.pages] == [1, 2, 3]
    assert "Alpha page opens the report." in parsed.pages[0].text
    assert "Beta page" in parsed.pages[1].text
    assert not any(page.scanned or page.images for page in parsed.pages)
    chunks = chunk_document(parsed, default_chunking(ingest))
    assert [(c.seq, c.page, c.chunk_type) for c in chunks] == [
        (0, 1, ChunkType.TEXT),
        (1, 2, ChunkType.TEXT),
        (2, 3, ChunkType.TEXT),
    ]
    for chunk in chunks:
        page_text = parsed.pages[(chunk.page or 0) - 1].text
        assert page_text[chunk.start_offset : chunk.end_offset] == chunk.content


def test_scanned_pdf_is_ocrd_into_a_sub_chunk(
    scanned_pdf: ParsedDocument, ingest: IngestSettings
) -> None:
    page = scanned_pdf.pages[0]
    assert page.scanned and page.blocks == []
    assert [image.source for image in page.images] == [ImageSource.PAGE_RENDER]
    assert "lighthouse keepers" in _ocr_words(page.images[0].ocr_text)
    assert "harbour" in _ocr_words(page.images[0].ocr_text)
    assert scanned_pdf.stats.scanned_pages == [1]
    assert scanned_pdf.stats.empty_pages == []
    chunks = chunk_document(scanned_pdf, default_chunking(ingest))
    assert [(c.seq, c.chunk_type, c.page, c.parent_seq) for c in chunks] == [
        (0, ChunkType.TEXT, 1, None),
        (1, ChunkType.IMAGE_OCR, 1, 0),
    ]
    assert chunks[0].content == ""
    assert "lighthouse" in chunks[1].content.lower()


def test_mixed_pdf_pages_and_parents(mixed_pdf: ParsedDocument, ingest: IngestSettings) -> None:
    text_page, scanned_page, blank_page = mixed_pdf.pages
    assert not text_page.scanned
    assert "quarterly sales" in text_page.text
    # Only the figure is OCR'd; the 20-pixel icon is decoration.
    assert [image.source for image in text_page.images] == [ImageSource.EMBEDDED_IMAGE]
    assert "quarterly figures" in _ocr_words(text_page.images[0].ocr_text)
    assert scanned_page.scanned
    assert "orchard apples" in _ocr_words(scanned_page.images[0].ocr_text)
    assert blank_page.scanned and blank_page.empty_after_ocr
    assert mixed_pdf.stats.scanned_pages == [2, 3]
    assert mixed_pdf.stats.empty_pages == [3]

    chunks = chunk_document(mixed_pdf, default_chunking(ingest))
    assert [c.seq for c in chunks] == list(range(len(chunks)))
    shape = [(c.page, c.chunk_type, c.parent_seq) for c in chunks]
    assert shape == [
        (1, ChunkType.TEXT, None),
        (1, ChunkType.IMAGE_OCR, 0),
        (2, ChunkType.TEXT, None),
        (2, ChunkType.IMAGE_OCR, 2),
    ]
    assert chunks[2].content == ""
    assert "autumn" in chunks[3].content.lower()


def test_encrypted_pdf_is_refused(ingest: IngestSettings) -> None:
    data = _pdf(
        _text_page("secret plans"),
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        user_pw="open-sesame",
        owner_pw="owner",
    )
    with pytest.raises(EncryptedFileError):
        parse_file(data, FileType.PDF, ingest)


def test_pdf_with_only_an_owner_password_is_readable(ingest: IngestSettings) -> None:
    data = _pdf(
        _text_page("printing is restricted, reading is not"),
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        owner_pw="owner",
    )
    parsed = parse_file(data, FileType.PDF, ingest)
    assert "reading is not" in parsed.pages[0].text


@pytest.mark.parametrize("keep", [0.1, 0.3])
def test_truncated_pdf_is_corrupt(ingest: IngestSettings, keep: float) -> None:
    data = _pdf(*(_text_page(f"Page {n} of a report that was cut short.") for n in range(3)))
    with pytest.raises(CorruptFileError) as raised:
        parse_file(data[: int(len(data) * keep)], FileType.PDF, ingest)
    assert "PDF" in raised.value.message


def test_garbage_after_a_pdf_header_is_corrupt(ingest: IngestSettings) -> None:
    with pytest.raises(CorruptFileError):
        parse_file(b"%PDF-1.7\n" + b"\x13garbage" * 200, FileType.PDF, ingest)


class _FakeCaptioner:
    def __init__(self) -> None:
        self.media_types: list[str] = []

    def caption(self, image: bytes, *, media_type: str) -> str:
        self.media_types.append(media_type)
        return f"  a picture of {len(image) > 0} words "


def test_png_is_ocrd_and_captioned_when_a_captioner_is_set(ingest: IngestSettings) -> None:
    captioner = _FakeCaptioner()
    png = _words_png(["MOUNTAIN RIVER"])
    parsed = parse_file(png, FileType.PNG, ingest, captioner=captioner)
    assert captioner.media_types == ["image/png"]
    page = parsed.pages[0]
    assert (page.number, page.scanned) == (1, True)
    assert "mountain river" in _ocr_words(page.images[0].ocr_text)
    chunks = chunk_document(parsed, default_chunking(ingest))
    assert [(c.chunk_type, c.parent_seq, c.page) for c in chunks] == [
        (ChunkType.TEXT, None, 1),
        (ChunkType.IMAGE_OCR, 0, 1),
        (ChunkType.IMAGE_CAPTION, 0, 1),
    ]
    assert chunks[2].content == "a picture of True words"


def test_multi_frame_tiff_gives_one_page_per_frame(ingest: IngestSettings) -> None:
    frames = [
        Image.open(io.BytesIO(_words_png([word]))) for word in ("FIRST FRAME", "SECOND FRAME")
    ]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="TIFF", save_all=True, append_images=frames[1:])
    parsed = parse_file(buffer.getvalue(), FileType.TIFF, ingest)
    assert [page.number for page in parsed.pages] == [1, 2]
    assert "first" in _ocr_words(parsed.pages[0].images[0].ocr_text)
    assert "second" in _ocr_words(parsed.pages[1].images[0].ocr_text)


def test_corrupt_image_is_refused(ingest: IngestSettings) -> None:
    with pytest.raises(CorruptFileError):
        parse_file(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, FileType.PNG, ingest)


def test_docx_paragraphs_and_table_cells_in_order(ingest: IngestSettings) -> None:
    document = docx.Document()
    document.add_heading("Quarterly report", level=1)
    document.add_paragraph("Sales grew in the north.")
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 1)).text = "Region"
    table.cell(0, 2).text = "Total"
    table.cell(1, 0).text = "North"
    table.cell(1, 1).text = "East"
    table.cell(1, 2).text = "42"
    document.add_paragraph("")
    document.add_paragraph("Closing words.")
    buffer = io.BytesIO()
    document.save(buffer)
    parsed = parse_file(buffer.getvalue(), FileType.DOCX, ingest)
    assert parsed.pages[0].number is None
    assert parsed.pages[0].blocks == [
        "Quarterly report",
        "Sales grew in the north.",
        "Region | Total",
        "North | East | 42",
        "Closing words.",
    ]


def test_corrupt_docx_is_refused(ingest: IngestSettings) -> None:
    document = docx.Document()
    buffer = io.BytesIO()
    document.save(buffer)
    with pytest.raises(CorruptFileError):
        parse_file(buffer.getvalue()[:200], FileType.DOCX, ingest)


def test_html_keeps_visible_text_only(ingest: IngestSettings) -> None:
    html = b"""<!DOCTYPE html><html><head><title>Harbour news</title>
    <style>p { color: red }</style><script>var secret = "do not index";</script></head>
    <body><noscript>enable javascript</noscript><template><p>hidden template</p></template>
    <!-- a comment -->
    <h1>Boats   are
      back</h1><p>Hello <b>sailors</b>,<br>welcome home.</p>
    <ul><li>first</li><li>second</li></ul><pre>keep   these   spaces</pre></body></html>"""
    parsed = parse_file(html, FileType.HTML, ingest)
    blocks = parsed.pages[0].blocks
    assert blocks == [
        "Harbour news",
        "Boats are back",
        "Hello sailors,\nwelcome home.",
        "first",
        "second",
        "keep   these   spaces",
    ]
    joined = parsed.pages[0].text
    for hidden in ("do not index", "color", "enable javascript", "hidden template", "comment"):
        assert hidden not in joined


def test_plain_text_decoding_and_cleaning(ingest: IngestSettings) -> None:
    utf8 = "\ufeffLigne un\r\nLigne deux\x00 fin".encode()
    assert parse_file(utf8, FileType.TXT, ingest).pages[0].text == "Ligne un\nLigne deux fin"
    legacy = "Crème brûlée à la carte".encode("cp1252")
    assert parse_file(legacy, FileType.TXT, ingest).pages[0].text == "Crème brûlée à la carte"


def test_markdown_image_link_stays_a_text_chunk(ingest: IngestSettings, tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\n![architecture](img/arch.png)\n", encoding="utf-8")
    parsed = parse_file(path, FileType.MARKDOWN, ingest)
    config = default_chunking(ingest).model_copy(update={"chunk_size": 30, "chunk_overlap": 0})
    chunks = chunk_document(parsed, config)
    assert [(c.chunk_type, c.content) for c in chunks] == [
        (ChunkType.TEXT, "# Notes"),
        (ChunkType.TEXT, "![architecture](img/arch.png)"),
    ]


def test_empty_input_is_refused(ingest: IngestSettings) -> None:
    with pytest.raises(EmptyFileError):
        parse_file(b"", FileType.TXT, ingest)
