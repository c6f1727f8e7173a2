"""Word (DOCX) documents to text blocks: paragraphs and table rows in body order."""

from __future__ import annotations

import io
import zipfile

import docx
from docx.opc.exceptions import OpcError
from docx.table import Table, _Cell
from docx.text.paragraph import Paragraph

from graphrag.errors import CorruptFileError
from graphrag.ingest.models import FileType, ParsedDocument, ParsedPage
from graphrag.ingest.parsers.text_decoding import clean_text

__all__ = ["parse_docx"]

_CELL_SEPARATOR = " | "


def _cell_text(cell: _Cell) -> str:
    parts: list[str] = []
    for item in cell.iter_inner_content():
        if isinstance(item, Paragraph):
            parts.append(item.text.strip())
        else:
            parts.extend(_table_rows(item))
    return "\n".join(part for part in parts if part)


def _table_rows(table: Table) -> list[str]:
    """One line per row, cells joined; a merged cell spanning columns is read once."""
    rows: list[str] = []
    for row in table.rows:
        # Held as elements (not ids) so identity stays valid while the row is read.
        seen: list[object] = []
        texts: list[str] = []
        for cell in row.cells:
            if any(cell._tc is element for element in seen):
                continue
            seen.append(cell._tc)
            text = _cell_text(cell)
            if text:
                texts.append(text)
        if texts:
            rows.append(_CELL_SEPARATOR.join(texts))
    return rows


def parse_docx(data: bytes) -> ParsedDocument:
    """DOCX body text: each paragraph a block, each table row a block (cells in order)."""
    try:
        document = docx.Document(io.BytesIO(data))
        blocks: list[str] = []
        for item in document.iter_inner_content():
            if isinstance(item, Paragraph):
                blocks.append(item.text)
            else:
                blocks.extend(_table_rows(item))
    except (OpcError, KeyError, ValueError, SyntaxError, zipfile.BadZipFile) as exc:
        # SyntaxError covers lxml's XMLSyntaxError on a damaged document.xml.
        raise CorruptFileError(f"the DOCX document cannot be read: {exc}") from exc
    cleaned = [clean_text(block).strip() for block in blocks]
    return ParsedDocument(
        file_type=FileType.DOCX, pages=[ParsedPage(blocks=[block for block in cleaned if block])]
    )
