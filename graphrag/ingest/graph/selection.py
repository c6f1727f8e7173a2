"""Which chunks of a document are sent to graph extraction (one model call each).

- A text chunk with a body takes part. Its body is what remains once Markdown image links
  (`![alt](url)`), HTML `<img>` tags and whitespace are removed: a chunk holding only image links
  is skipped.
- A text chunk without a body (typically a scanned page) is replaced by its `image_ocr`
  sub-chunks that hold text, so the OCR'd words reach the graph.
- `image_ocr` sub-chunks of a parent that has a body are left out: the page's text already goes
  to the graph, and sending the OCR as well would extract the same facts twice (a diagram's
  labels are usually restated in the page text). An `image_ocr` chunk whose parent is not among
  the given chunks (or that has none) takes part, since nothing else carries its text.
- `image_caption` sub-chunks never take part: a caption is a model's description of an image,
  not document text, and would duplicate the OCR.

The result keeps document order (`seq`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Protocol, TypeVar

from graphrag.ingest.models import ChunkType
from graphrag.text_scan import ascii_lower, is_word_char

__all__ = ["ChunkLike", "has_body", "select_graph_chunks"]

_MD_IMAGE, _MD_LABEL_END, _MD_TARGET, _MD_TARGET_END = "![", "]", "(", ")"
_HTML_IMAGE, _HTML_TAG_END = "<img", ">"


class ChunkLike(Protocol):
    """What selection reads of a chunk; the stored `Chunk` row and test fakes both fit."""

    @property
    def id(self) -> Hashable: ...

    @property
    def seq(self) -> int: ...

    @property
    def chunk_type(self) -> str: ...

    @property
    def content(self) -> str: ...

    @property
    def parent_chunk_id(self) -> Hashable | None: ...


C = TypeVar("C", bound=ChunkLike)


def _image_end(content: str, folded: str, pos: int) -> int:
    """Where the image link (`![alt](target)` or `<img ...>`) starting at `pos` ends, or -1."""
    if content.startswith(_MD_IMAGE, pos):
        label_end = content.find(_MD_LABEL_END, pos + len(_MD_IMAGE))
        if label_end < 0 or not content.startswith(_MD_TARGET, label_end + 1):
            return -1
        target_end = content.find(_MD_TARGET_END, label_end + 2)
        return target_end + 1 if target_end >= 0 else -1
    after = pos + len(_HTML_IMAGE)
    if folded.startswith(_HTML_IMAGE, pos) and not (
        after < len(content) and is_word_char(content[after])
    ):
        tag_end = content.find(_HTML_TAG_END, after)
        return tag_end + 1 if tag_end >= 0 else -1
    return -1


def has_body(content: str) -> bool:
    """Whether `content` holds text besides image links and whitespace (one forward scan)."""
    folded = ascii_lower(content)
    pos = 0
    while pos < len(content):
        if content[pos].isspace():
            pos += 1
            continue
        end = _image_end(content, folded, pos)
        if end < 0:
            return True
        pos = end
    return False


def select_graph_chunks(chunks: Sequence[C]) -> list[C]:
    """The chunks to extract a graph from, by the rules of this module, in `seq` order."""
    texts = {chunk.id: chunk for chunk in chunks if chunk.chunk_type == ChunkType.TEXT}
    selected: list[C] = []
    for chunk in chunks:
        if chunk.chunk_type == ChunkType.TEXT:
            keep = has_body(chunk.content)
        elif chunk.chunk_type == ChunkType.IMAGE_OCR:
            parent = texts.get(chunk.parent_chunk_id)
            keep = bool(chunk.content.strip()) and (parent is None or not has_body(parent.content))
        else:
            keep = False
        if keep:
            selected.append(chunk)
    return sorted(selected, key=lambda chunk: chunk.seq)
