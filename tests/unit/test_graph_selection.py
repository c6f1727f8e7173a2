"""Which chunks go to graph extraction: body text, OCR of body-less pages, never captions."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID, uuid4

import pytest

from graphrag.ingest.graph.selection import has_body, select_graph_chunks
from graphrag.ingest.models import ChunkType

pytestmark = pytest.mark.unit

TEXT, OCR, CAPTION = ChunkType.TEXT, ChunkType.IMAGE_OCR, ChunkType.IMAGE_CAPTION
IMG = "![page 3](images/p3.png)"


@dataclass(frozen=True)
class FakeChunk:
    id: UUID
    seq: int
    chunk_type: str
    content: str
    parent_chunk_id: UUID | None


def chunks(*rows: tuple[int, str, str, int | None]) -> list[FakeChunk]:
    """Rows of (seq, type, content, parent seq); ids are derived from seqs."""
    return [
        FakeChunk(UUID(int=seq + 1), seq, kind, content, None if p is None else UUID(int=p + 1))
        for seq, kind, content, p in rows
    ]


CASES = [
    ("body text", chunks((0, TEXT, "Acme was founded in Lyon.", None)), [0]),
    ("image link only", chunks((0, TEXT, IMG, None)), []),
    ("several image links and blanks", chunks((0, TEXT, f" {IMG}\n\n{IMG} \t", None)), []),
    ("html image only", chunks((0, TEXT, '<img src="a.png" alt="x">', None)), []),
    ("image link with words", chunks((0, TEXT, f"{IMG} Figure 3: sales by region", None)), [0]),
    ("empty text chunk", chunks((0, TEXT, "", None)), []),
    (
        "scanned page: OCR instead of the empty parent, caption never",
        chunks(
            (0, TEXT, "  \n ", None),
            (1, OCR, "Contract between Acme and Bolt", 0),
            (2, OCR, "signed in Lyon on 3 May", 0),
            (3, CAPTION, "A scanned contract page", 0),
        ),
        [1, 2],
    ),
    (
        "parent holding only an image link counts as body-less",
        chunks((0, TEXT, IMG, None), (1, OCR, "Quarterly report", 0)),
        [1],
    ),
    (
        "OCR of a page that has body text is left out",
        chunks(
            (0, TEXT, "Acme sells valves.", None),
            (1, OCR, "Acme sells valves.", 0),
            (2, CAPTION, "A photo of a valve", 0),
        ),
        [0],
    ),
    (
        "blank OCR is skipped",
        chunks((0, TEXT, "", None), (1, OCR, " \n", 0)),
        [],
    ),
    ("OCR without a parent takes part", chunks((0, OCR, "Invoice 42", None)), [0]),
    ("OCR whose parent was not given takes part", chunks((5, OCR, "Invoice 42", 4)), [5]),
    ("caption alone never", chunks((0, CAPTION, "A cat on a sofa", None)), []),
    (
        "mixed document keeps document order",
        list(
            reversed(
                chunks(
                    (0, TEXT, "Page one text.", None),
                    (1, OCR, "Logo text", 0),
                    (2, TEXT, "", None),
                    (3, OCR, "Scanned page two", 2),
                    (4, CAPTION, "Scan of page two", 2),
                    (5, TEXT, "Page three text.", None),
                )
            )
        ),
        [0, 3, 5],
    ),
    (
        "stored rows use plain strings for types",
        chunks((0, "text", "", None), (1, "image_ocr", "Scanned", 0), (2, "image_caption", "x", 0)),
        [1],
    ),
    ("nothing", [], []),
]


@pytest.mark.parametrize(("given", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_select_graph_chunks(given: list[FakeChunk], expected: list[int]) -> None:
    selected = select_graph_chunks(given)

    assert [chunk.seq for chunk in selected] == expected
    assert all(any(chunk is original for original in given) for chunk in selected)


def test_real_uuids_as_ids() -> None:
    parent, child = uuid4(), uuid4()
    given = [
        FakeChunk(parent, 0, TEXT, "", None),
        FakeChunk(child, 1, OCR, "Scanned words", parent),
    ]

    assert select_graph_chunks(given) == [given[1]]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", False),
        (" \n\t", False),
        (IMG, False),
        ("![](x.png)![b](y.png 'title')", False),
        ("<IMG SRC='x'>", False),
        ("![a](x.png) b", True),
        ("[a link](https://example.org)", True),
        ("plain", True),
    ],
)
def test_has_body(content: str, expected: bool) -> None:
    assert has_body(content) is expected
