"""Documents made on the fly for tests: text and scanned PDFs, DOCX, HTML, images."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import docx
import pymupdf
from PIL import Image, ImageDraw, ImageFont

__all__ = [
    "blank_png",
    "corrupt_pdf",
    "docx_bomb",
    "docx_file",
    "docx_with_extra_entries",
    "encrypted_pdf",
    "html_file",
    "mixed_pdf",
    "pdf_with_figure",
    "png_with_text",
    "scanned_pdf",
    "text_pdf",
    "tiff_frames",
]

_BOMB_PIECE = b" " * (1 << 20)  # one MiB of padding, written again and again

_FONT_PX = 48
_MARGIN_PX = 40
_LINE_GAP_PX = 24


def _text_image(lines: list[str], width: int = 1700) -> bytes:
    """Black text on white, large enough for Tesseract to read reliably."""
    font = ImageFont.load_default(size=_FONT_PX)
    height = _MARGIN_PX * 2 + len(lines) * (_FONT_PX + _LINE_GAP_PX)
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text(
            (_MARGIN_PX, _MARGIN_PX + i * (_FONT_PX + _LINE_GAP_PX)), line, fill="black", font=font
        )
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def png_with_text(lines: list[str]) -> bytes:
    return _text_image(lines)


def _add_text_page(pdf: pymupdf.Document, text: str) -> None:
    page = pdf.new_page()
    rect = pymupdf.Rect(page.rect.x0 + 50, page.rect.y0 + 50, page.rect.x1 - 50, page.rect.y1 - 50)
    page.insert_textbox(rect, text, fontsize=11)


def _add_scanned_page(pdf: pymupdf.Document, lines: list[str]) -> None:
    page = pdf.new_page()
    page.insert_image(page.rect, stream=_text_image(lines))


def text_pdf(pages: list[str]) -> bytes:
    pdf = pymupdf.open()
    for text in pages:
        _add_text_page(pdf, text)
    return bytes(pdf.tobytes())


def scanned_pdf(pages: list[list[str]]) -> bytes:
    """Pages that are only a picture of text: no text layer at all."""
    pdf = pymupdf.open()
    for lines in pages:
        _add_scanned_page(pdf, lines)
    return bytes(pdf.tobytes())


def mixed_pdf(text: str, scanned_lines: list[str]) -> bytes:
    pdf = pymupdf.open()
    _add_text_page(pdf, text)
    _add_scanned_page(pdf, scanned_lines)
    return bytes(pdf.tobytes())


def pdf_with_figure(text: str, figure: bytes) -> bytes:
    """One text page that also holds a picture (an embedded image, not a scanned page)."""
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_textbox(pymupdf.Rect(50, 50, page.rect.x1 - 50, 200), text, fontsize=11)
    page.insert_image(pymupdf.Rect(50, 250, page.rect.x1 - 50, 450), stream=figure)
    return bytes(pdf.tobytes())


def encrypted_pdf(text: str, password: str = "secret") -> bytes:
    pdf = pymupdf.open()
    _add_text_page(pdf, text)
    return bytes(
        pdf.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw=password, owner_pw=password)
    )


def corrupt_pdf(text: str) -> bytes:
    """A real PDF cut in half: the header is right, the body is not."""
    whole = text_pdf([text])
    return whole[: len(whole) // 2]


def docx_file(paragraphs: list[str], table: list[list[str]] | None = None) -> bytes:
    document = docx.Document()
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def html_file(title: str, body: str) -> bytes:
    return (
        f"<!doctype html><html><head><title>{title}</title>"
        "<script>var secret = 'do not index this script';</script>"
        "<style>body { color: red; }</style></head>"
        f"<body><h1>{title}</h1><p>{body}</p></body></html>"
    ).encode()


def docx_bomb(inflated_mib: int) -> bytes:
    """A real DOCX whose `word/document.xml` inflates to about `inflated_mib` MiB of padding."""
    plain = zipfile.ZipFile(io.BytesIO(docx_file(["bomb"])))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bomb:
        for entry in plain.infolist():
            body = plain.read(entry)
            if entry.filename != "word/document.xml":
                bomb.writestr(entry, body)
                continue
            head, tail = body.split(b"<w:body>", 1)
            with bomb.open("word/document.xml", "w", force_zip64=True) as part:
                part.write(head + b"<w:body>")
                for _ in range(inflated_mib):
                    part.write(_BOMB_PIECE)
                part.write(tail)
    return out.getvalue()


def docx_with_extra_entries(extra: int) -> bytes:
    """A real DOCX with `extra` more one-byte files in its archive, after its own parts."""
    plain = zipfile.ZipFile(io.BytesIO(docx_file(["padded"])))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as padded:
        for entry in plain.infolist():
            padded.writestr(entry, plain.read(entry))
        for i in range(extra):
            padded.writestr(f"pad/{i}", b"x")
    return out.getvalue()


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def blank_png(width: int, height: int) -> bytes:
    """A black greyscale PNG written row by row without holding its pixels: a few hundred KB
    that decode to width x height bytes (and three times that once converted to RGB)."""
    row = bytes(width + 1)  # filter byte "none", then the row's pixels
    deflate = zlib.compressobj()
    idat = b"".join(deflate.compress(row) for _ in range(height)) + deflate.flush()
    header = struct.pack(">2I5B", width, height, 8, 0, 0, 0, 0)  # 8-bit greyscale
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", idat)
        + _png_chunk(b"IEND", b"")
    )


def tiff_frames(count: int, size: int = 64) -> bytes:
    """A TIFF of `count` small blank frames."""
    frames = [Image.new("L", (size, size), 255) for _ in range(count)]
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:])
    return out.getvalue()
