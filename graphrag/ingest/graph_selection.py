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

import re
from collections.abc import Hashable, Sequence
from typing import Protocol, TypeVar

from graphrag.ingest.models import ChunkType

__all__ = ["ChunkLike", "has_body", "select_graph_chunks"]

_IMAGE_MARKUP = re.compile(r"!\[[^\]]*\]\([^)]*\)|<img\b[^>]*>", re.I)


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


def has_body(content: str) -> bool:
    """Whether `content` holds text besides image links and whitespace."""
    return bool(_IMAGE_MARKUP.sub("", content).strip())


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
