"""The chunker: sizes, overlaps, separator preference, offsets, and chunk drafts per document."""

from __future__ import annotations

import itertools
import random

import pytest
from pydantic import ValidationError

from graphrag.ingest.chunker import chunk_document, split_text
from graphrag.ingest.models import (
    ChunkType,
    FileType,
    ImageSource,
    ImageText,
    ParsedDocument,
    ParsedPage,
)
from graphrag.kb.chunking import ChunkingConfig, default_chunking
from graphrag.settings import get_settings

pytestmark = pytest.mark.unit

SEPARATORS = ["\n\n", "\n", "。", ". ", " "]
WORDS = ["graph", "noeud", "relation", "entité", "vector", "chunk", "é" * 9, "x" * 23, "。", "a."]


def _text(seed: int, words: int) -> str:
    rng = random.Random(seed)
    parts = []
    for _ in range(words):
        parts.append(rng.choice(WORDS))
        parts.append(rng.choice([" ", " ", " ", " ", "\n", "\n\n", ". ", "  "]))
    return "".join(parts)


CONFIGS = [
    ChunkingConfig(chunk_size=50, chunk_overlap=10, separators=SEPARATORS),
    ChunkingConfig(chunk_size=120, chunk_overlap=30, separators=SEPARATORS),
    ChunkingConfig(chunk_size=20, chunk_overlap=0, separators=[" "]),
    ChunkingConfig(chunk_size=512, chunk_overlap=80, separators=SEPARATORS),
]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("seed", range(8))
def test_chunks_respect_size_overlap_and_offsets(config: ChunkingConfig, seed: int) -> None:
    text = _text(seed, 400)
    spans = split_text(text, config)
    assert spans
    covered: set[int] = set()
    for span in spans:
        content = text[span.start : span.end]
        assert 0 < len(content) <= config.chunk_size
        assert content == content.strip()
        covered.update(range(span.start, span.end))
    for previous, current in itertools.pairwise(spans):
        assert current.start > previous.start and current.end > previous.end
        assert previous.end - current.start <= config.chunk_overlap
    # Nothing but whitespace is left out.
    assert all(text[i].isspace() for i in range(len(text)) if i not in covered)


def test_overlap_is_used_between_consecutive_chunks() -> None:
    config = ChunkingConfig(chunk_size=60, chunk_overlap=20, separators=[" "])
    text = " ".join(f"w{i:03d}" for i in range(200))  # 4-char words: boundaries everywhere
    spans = split_text(text, config)
    overlaps = [prev.end - cur.start for prev, cur in itertools.pairwise(spans)]
    assert len(spans) > 5
    assert all(15 <= overlap <= 20 for overlap in overlaps)
    # Overlaps start on a word, never in the middle of one.
    assert all(text[span.start] == "w" for span in spans)


def test_prefers_paragraphs_then_words() -> None:
    config = ChunkingConfig(chunk_size=100, chunk_overlap=0, separators=SEPARATORS)
    paragraphs = ["alpha " * 6, "beta " * 7, "gamma " * 8]
    text = "\n\n".join(p.strip() for p in paragraphs)
    contents = [text[s.start : s.end] for s in split_text(text, config)]
    assert contents == [
        paragraphs[0].strip() + "\n\n" + paragraphs[1].strip(),
        paragraphs[2].strip(),
    ]


def test_a_token_longer_than_the_chunk_is_hard_split() -> None:
    config = ChunkingConfig(chunk_size=100, chunk_overlap=10, separators=SEPARATORS)
    text = "start " + "Z" * 250 + " end"
    spans = split_text(text, config)
    contents = [text[s.start : s.end] for s in spans]
    assert contents[0] == "start"
    assert contents[1] == "Z" * 100  # no overlap back into "start": that cut was at a space
    assert contents[-1].endswith("Z end")
    assert all(len(content) <= 100 for content in contents)
    # Inside the token the cuts are hard and overlap by exactly chunk_overlap characters.
    assert [prev.end - cur.start for prev, cur in itertools.pairwise(spans[1:])] == [10] * (
        len(spans) - 2
    )
    z_positions = {i for i, char in enumerate(text) if char == "Z"}
    assert z_positions <= {i for s in spans for i in range(s.start, s.end)}


def test_sizes_count_characters_not_bytes() -> None:
    config = ChunkingConfig(chunk_size=30, chunk_overlap=0, separators=[" "])
    text = " ".join(["日本語のテキスト"] * 20)  # 3 bytes per character in UTF-8
    spans = split_text(text, config)
    assert max(s.end - s.start for s in spans) > 20  # would be 10 if bytes were counted
    assert all(s.end - s.start <= 30 for s in spans)


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t \n"])
def test_whitespace_gives_no_chunk(text: str) -> None:
    assert split_text(text, CONFIGS[0]) == []


def test_short_text_is_one_trimmed_chunk() -> None:
    spans = split_text("  hello world \n", CONFIGS[0])
    assert [(s.start, s.end) for s in spans] == [(2, 13)]


def test_config_validation() -> None:
    with pytest.raises(ValidationError):
        ChunkingConfig(chunk_size=10, chunk_overlap=10, separators=[" "])
    with pytest.raises(ValidationError):
        ChunkingConfig(chunk_size=10, chunk_overlap=2, separators=[""])
    with pytest.raises(ValidationError):
        ChunkingConfig(chunk_size=0, chunk_overlap=0, separators=[" "])


def test_a_base_without_its_own_chunking_takes_the_settings() -> None:
    ingest = get_settings().ingest
    default = default_chunking(ingest)
    assert (default.chunk_size, default.chunk_overlap) == (ingest.chunk_size, ingest.chunk_overlap)
    assert default.separators == ingest.separators


def _document() -> ParsedDocument:
    return ParsedDocument(
        file_type=FileType.PDF,
        pages=[
            ParsedPage(number=1, blocks=["First page. " * 10, "Second block."]),
            ParsedPage(
                number=2,
                scanned=True,
                images=[ImageText(source=ImageSource.PAGE_RENDER, ocr_text="scanned words " * 8)],
            ),
            ParsedPage(number=3, scanned=True, images=[ImageText(source=ImageSource.PAGE_RENDER)]),
            ParsedPage(
                number=4,
                blocks=["Text beside a figure."],
                images=[
                    ImageText(
                        source=ImageSource.EMBEDDED_IMAGE,
                        ocr_text="figure label",
                        caption="a bar chart",
                    )
                ],
            ),
        ],
    )


def test_document_chunks_have_dense_seqs_parents_and_pages() -> None:
    config = ChunkingConfig(chunk_size=60, chunk_overlap=10, separators=SEPARATORS)
    document = _document()
    chunks = chunk_document(document, config)
    assert [c.seq for c in chunks] == list(range(len(chunks)))
    by_page: dict[int | None, list[int]] = {}
    for chunk in chunks:
        by_page.setdefault(chunk.page, []).append(chunk.seq)
    assert set(by_page) == {1, 2, 4}  # page 3 yielded nothing at all: no chunk
    # Page 1: text only, offsets slice back into the page text.
    page_one = [c for c in chunks if c.page == 1]
    assert all(c.chunk_type is ChunkType.TEXT and c.parent_seq is None for c in page_one)
    assert len(page_one) > 2
    for chunk in page_one:
        assert document.pages[0].text[chunk.start_offset : chunk.end_offset] == chunk.content
    # Page 2: one empty text chunk as the parent of the OCR chunks.
    page_two = [c for c in chunks if c.page == 2]
    parent = page_two[0]
    assert (parent.chunk_type, parent.content, parent.parent_seq) == (ChunkType.TEXT, "", None)
    ocr = page_two[1:]
    assert len(ocr) > 1
    assert all(c.chunk_type is ChunkType.IMAGE_OCR and c.parent_seq == parent.seq for c in ocr)
    ocr_text = document.pages[1].images[0].ocr_text
    assert all(ocr_text[c.start_offset : c.end_offset] == c.content for c in ocr)
    # Page 4: text, then the OCR and the caption of its figure, both under the text chunk.
    kinds = [(c.chunk_type, c.content, c.parent_seq) for c in chunks if c.page == 4]
    text_seq = by_page[4][0]
    assert kinds == [
        (ChunkType.TEXT, "Text beside a figure.", None),
        (ChunkType.IMAGE_OCR, "figure label", text_seq),
        (ChunkType.IMAGE_CAPTION, "a bar chart", text_seq),
    ]


def test_an_image_link_stays_a_text_chunk() -> None:
    document = ParsedDocument(
        file_type=FileType.MARKDOWN, pages=[ParsedPage(blocks=["![diagram](img/arch.png)"])]
    )
    chunks = chunk_document(document, CONFIGS[0])
    assert [(c.chunk_type, c.content, c.page) for c in chunks] == [
        (ChunkType.TEXT, "![diagram](img/arch.png)", None)
    ]
