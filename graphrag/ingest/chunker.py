"""Cut page text into chunks of at most `chunk_size` characters, preferring coarse separators.

The cut follows the recursive-separator rule: a chunk ends at the last occurrence of the first
separator (in the configured order: paragraph, line, sentence, word) that fits in the window;
only a run with no separator at all is cut hard at `chunk_size`. The next chunk starts up to
`chunk_overlap` characters back, at the earliest separator boundary in that tail. Offsets are
positions in the page text, so `text[start_offset:end_offset] == content` always holds.
"""

from __future__ import annotations

from typing import NamedTuple

from graphrag.ingest.models import ChunkDraft, ChunkType, ParsedDocument, ParsedPage
from graphrag.kb.chunking import ChunkingConfig

__all__ = ["TextSpan", "chunk_document", "split_text"]


class TextSpan(NamedTuple):
    """A chunk's place in its source text: `text[start:end]` is the chunk."""

    start: int
    end: int


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def _trimmed(text: str, start: int, end: int) -> TextSpan | None:
    start = _skip_space(text, start)
    while end > start and text[end - 1].isspace():
        end -= 1
    return TextSpan(start, end) if end > start else None


def _best_cut(text: str, fresh: int, limit: int, separators: list[str]) -> tuple[int, bool]:
    """End of the chunk: after the last coarsest separator in [fresh, limit), else `limit`.

    The flag says the cut is hard (inside a run without any separator).
    """
    for separator in separators:
        index = text.rfind(separator, fresh, limit)
        if index != -1:
            return index + len(separator), False
    return limit, True


def _overlap_start(text: str, start: int, cut: int, hard: bool, config: ChunkingConfig) -> int:
    """Where the next chunk starts: the earliest separator boundary within the overlap tail.

    Without a boundary there, a hard cut overlaps by exactly `chunk_overlap` characters; a cut
    at a separator gets no overlap rather than one starting in the middle of a word.
    """
    low = max(cut - config.chunk_overlap, start + 1)
    if low >= cut:
        return cut
    boundaries = []
    for separator in config.separators:
        # Only separators ending inside [low, cut - 1] give an overlap that is not empty.
        index = text.find(separator, max(low - len(separator), start), cut - 1)
        if index != -1:
            boundaries.append(index + len(separator))
    if not boundaries and not hard:
        return cut
    begin = _skip_space(text, min(boundaries) if boundaries else low)
    return begin if begin < cut else cut


def split_text(text: str, config: ChunkingConfig) -> list[TextSpan]:
    """Spans of `text` no longer than `config.chunk_size`, consecutive ones overlapping.

    Leading and trailing whitespace of every chunk is trimmed (offsets move with it); text made
    only of whitespace gives no span.
    """
    spans: list[TextSpan] = []
    fresh = _skip_space(text, 0)  # first character no earlier chunk holds
    start = fresh
    while fresh < len(text):
        limit = min(start + config.chunk_size, len(text))
        if limit == len(text):
            cut, hard = limit, False
        else:
            cut, hard = _best_cut(text, fresh, limit, config.separators)
        span = _trimmed(text, start, cut)
        if span is not None:
            spans.append(span)
        next_fresh = _skip_space(text, cut)
        # The next chunk must start after this one's first character, or it would contain it.
        floor = span.start if span is not None else start
        start = _overlap_start(text, floor, cut, hard, config)
        fresh = next_fresh
        if start + config.chunk_size <= fresh:
            start = fresh  # the overlap would leave no room for new text
    return spans


def _chunks_of(
    text: str,
    chunk_type: ChunkType,
    page: int | None,
    parent_seq: int | None,
    first_seq: int,
    config: ChunkingConfig,
) -> list[ChunkDraft]:
    return [
        ChunkDraft(
            seq=first_seq + offset,
            chunk_type=chunk_type,
            content=text[span.start : span.end],
            page=page,
            start_offset=span.start,
            end_offset=span.end,
            parent_seq=parent_seq,
        )
        for offset, span in enumerate(split_text(text, config))
    ]


def _page_chunks(page: ParsedPage, first_seq: int, config: ChunkingConfig) -> list[ChunkDraft]:
    chunks = _chunks_of(page.text, ChunkType.TEXT, page.number, None, first_seq, config)
    sub_sources = [
        (chunk_type, text)
        for image in page.images
        for chunk_type, text in (
            (ChunkType.IMAGE_OCR, image.ocr_text),
            (ChunkType.IMAGE_CAPTION, image.caption or ""),
        )
        if text.strip()
    ]
    if not sub_sources:
        return chunks
    if not chunks:
        # A scanned page has no body text, yet its OCR needs a parent chunk to hang from.
        empty = ChunkDraft(seq=first_seq, chunk_type=ChunkType.TEXT, content="", page=page.number)
        chunks = [empty]
    parent = chunks[0].seq
    for chunk_type, text in sub_sources:
        next_seq = first_seq + len(chunks)
        chunks.extend(_chunks_of(text, chunk_type, page.number, parent, next_seq, config))
    return chunks


def chunk_document(document: ParsedDocument, config: ChunkingConfig) -> list[ChunkDraft]:
    """Chunk drafts for a whole document, `seq` dense from 0 in document order.

    Per page: its text chunks, then for each image its `image_ocr` chunks and its
    `image_caption` chunks, whose `parent_seq` is the page's first text chunk (an empty one is
    made when the page has no text). Sub-chunk offsets are positions in that image's OCR text
    or caption.
    """
    chunks: list[ChunkDraft] = []
    for page in document.pages:
        chunks.extend(_page_chunks(page, len(chunks), config))
    return chunks
