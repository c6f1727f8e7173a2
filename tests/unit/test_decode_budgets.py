"""Decode budgets: hostile files are refused from their headers before anything is decoded, and
HTML is read in time linear in its size however deep it nests (work counted, not timed)."""

from __future__ import annotations

import io
import sys
from types import FrameType
from typing import Any

import pymupdf as _pymupdf
import pytest
from PIL import Image

from graphrag.errors import DecodeBudgetError
from graphrag.ingest.models import FileType
from graphrag.ingest.parsers.decode_budgets import apply_pillow_limit
from graphrag.ingest.parsers.parse import parse_file
from graphrag.ingest.parsers.text import html_to_blocks
from graphrag.settings import IngestSettings, get_settings
from tests.support import sample_files

pytestmark = pytest.mark.unit

pymupdf: Any = _pymupdf
DEPTH = get_settings().ingest.html_max_depth


def _ingest(**caps: Any) -> IngestSettings:
    return get_settings().ingest.model_copy(update=caps)


def test_docx_bomb_refused_from_its_directory() -> None:
    bomb = sample_files.docx_bomb(inflated_mib=8)
    assert len(bomb) < 64 * 1024  # 8 MiB of padding deflates to a few KiB
    caps = _ingest(docx_ratio_min_bytes=1 << 20, docx_max_ratio=100)
    with pytest.raises(DecodeBudgetError, match=r"word/document\.xml inflates"):
        parse_file(bomb, FileType.DOCX, caps)
    sized = _ingest(docx_max_entry_bytes=4 << 20, docx_max_ratio=1e9)
    with pytest.raises(DecodeBudgetError, match="would inflate to"):
        parse_file(bomb, FileType.DOCX, sized)
    # Within the budgets the same file parses: the checks refuse by size, not by shape.
    roomy = _ingest(docx_max_ratio=1e9)
    assert parse_file(bomb, FileType.DOCX, roomy).pages[0].blocks == ["bomb"]


def test_docx_total_and_entry_count_caps() -> None:
    plain = sample_files.docx_file(["hello"])
    with pytest.raises(DecodeBudgetError, match="holds"):
        parse_file(plain, FileType.DOCX, _ingest(docx_max_entries=2))
    with pytest.raises(DecodeBudgetError, match="would inflate to"):
        parse_file(plain, FileType.DOCX, _ingest(docx_max_total_bytes=1000))


def _png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("L", (width, height), 255).save(out, format="PNG")
    return out.getvalue()


def test_image_over_the_pixel_budget_is_not_decoded() -> None:
    caps = _ingest(image_max_pixels=1_000_000)
    try:
        with pytest.raises(DecodeBudgetError, match="1200x1000"):
            parse_file(_png(1200, 1000), FileType.PNG, caps)
        # Pillow's own guard follows the setting too: it refuses at twice the limit, on open.
        with pytest.raises(DecodeBudgetError, match="too large"):
            parse_file(_png(2000, 1500), FileType.PNG, caps)
        assert Image.MAX_IMAGE_PIXELS == 1_000_000
    finally:
        apply_pillow_limit(get_settings().ingest)


def test_tiff_frame_cap() -> None:
    data = sample_files.tiff_frames(5)
    with pytest.raises(DecodeBudgetError, match="5 frames"):
        parse_file(data, FileType.TIFF, _ingest(tiff_max_frames=4))


def test_pdf_page_cap() -> None:
    data = sample_files.text_pdf([f"page {i}" for i in range(5)])
    with pytest.raises(DecodeBudgetError, match="5 pages"):
        parse_file(data, FileType.PDF, _ingest(pdf_max_pages=4))


def test_ocr_page_budget_counts_skipped_pages() -> None:
    data = sample_files.scanned_pdf([["FIRST PAGE"], ["SECOND PAGE"], ["THIRD PAGE"]])
    parsed = parse_file(data, FileType.PDF, _ingest(ocr_max_pages=1))
    assert [len(page.images) for page in parsed.pages] == [1, 0, 0]
    assert parsed.stats.images_skipped == 2
    assert "FIRST" in parsed.pages[0].images[0].ocr_text


def test_pdf_image_over_the_pixel_budget_is_skipped_before_decoding() -> None:
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_textbox(pymupdf.Rect(50, 50, 500, 150), "A page with text and a big picture.")
    page.insert_image(pymupdf.Rect(50, 200, 300, 400), stream=_png(3000, 2000))
    parsed = parse_file(pdf.tobytes(), FileType.PDF, _ingest(image_max_pixels=5_000_000))
    assert parsed.pages[0].images == [] and parsed.pages[0].images_skipped == 1


def _calls(markup: str) -> int:
    """Python function calls (and generator resumptions) made while reading `markup`."""
    count = 0

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal count
        if event == "call":
            count += 1

    sys.setprofile(profile)
    try:
        html_to_blocks(markup, DEPTH)
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize(
    "unit",
    ["<div><span>word </span>", "<pre><b>x</b>", "<p><i>a<br>b</i>"],
    ids=["nested-divs", "nested-pre", "nested-paragraphs"],
)
def test_html_work_grows_linearly_with_nesting(unit: str) -> None:
    small, large = 100, 400  # repeats of the unit: the deepest stays within the budget
    ratio = _calls(unit * large) / _calls(unit * small)
    assert ratio < (large / small) * 1.5, ratio


def test_deep_html_keeps_its_text_up_to_the_depth_budget() -> None:
    # <html> and <body> are open around the page's own elements.
    levels = DEPTH - 2
    blocks = html_to_blocks("<div>" * levels + "deep text" + "</div>" * levels, DEPTH)
    assert blocks == ["deep text"]
    with pytest.raises(DecodeBudgetError, match=r"deeper than \d+ \(ingest\.html_max_depth\)"):
        html_to_blocks("<div>" * (levels + 1) + "too deep", DEPTH)
