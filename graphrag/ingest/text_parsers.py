"""Plain text, Markdown and HTML to text blocks. These formats have no pages: `number` is None."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning
from bs4.element import NavigableString, PageElement, PreformattedString, Tag

from graphrag.ingest.models import FileType, ParsedDocument, ParsedPage
from graphrag.ingest.text_decoding import clean_text, decode_text
from graphrag.text_scan import collapse_spaces, line_groups

__all__ = ["html_to_blocks", "parse_html", "parse_plain_text"]

# Elements whose content is code or hidden markup, never reader-visible text.
_DROPPED_TAGS = ("script", "style", "noscript", "template")
# Elements that start a new block of text when a browser lays the page out.
_BLOCK_TAGS = frozenset(
    {
        *("address", "article", "aside", "blockquote", "caption", "dd", "details", "dialog"),
        *("div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header"),
        *("h1", "h2", "h3", "h4", "h5", "h6", "hr", "li", "main", "nav", "ol", "p", "pre"),
        *("section", "summary", "table", "td", "th", "title", "tr", "ul"),
    }
)
_BLOCK_BREAK = "\n\n"
_LINE_BREAK = "\n"


def _page(text: str) -> ParsedPage:
    text = text.strip()
    return ParsedPage(blocks=[text] if text else [])


def parse_plain_text(data: bytes, file_type: FileType) -> ParsedDocument:
    """TXT or Markdown: decoded (UTF-8, else a tolerant fallback) and kept whole as one block.

    Markdown syntax is kept: headings and lists carry meaning for retrieval and extraction.
    """
    return ParsedDocument(file_type=file_type, pages=[_page(clean_text(decode_text(data)))])


def _walk(soup: BeautifulSoup) -> Iterator[str]:
    """The visible text of the tree in document order, with block and line breaks.

    One iterative pass, each node visited once and the tree left as it is: no lookups of
    parents or sibling positions, so time stays linear however deep or wide the markup is.
    """
    # Each entry: (node, inside <pre>); a str entry is a break emitted after the children.
    stack: list[tuple[PageElement, bool] | str] = [(soup, False)]
    while stack:
        entry = stack.pop()
        if isinstance(entry, str):
            yield entry
            continue
        node, in_pre = entry
        if isinstance(node, PreformattedString):  # comments, doctype, CDATA, PIs
            continue
        if isinstance(node, NavigableString):
            yield str(node) if in_pre else collapse_spaces(str(node))
            continue
        if not isinstance(node, Tag) or node.name in _DROPPED_TAGS:
            continue
        if node.name == "br":
            yield _LINE_BREAK
            continue
        if node.name in _BLOCK_TAGS:
            yield _BLOCK_BREAK
            stack.append(_BLOCK_BREAK)
        inner = in_pre or node.name == "pre"
        stack.extend((child, inner) for child in reversed(node.contents))


def html_to_blocks(markup: str) -> list[str]:
    """Visible text of an HTML document as blocks, in document order."""
    with warnings.catch_warnings():
        # Short inputs that look like a URL or XHTML with an XML prolog are still HTML to us.
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(markup, "html.parser")
    # A blank line (only whitespace) ends a block; lines are stripped, empty ones dropped.
    return line_groups("".join(_walk(soup)))


def parse_html(data: bytes) -> ParsedDocument:
    """HTML: visible text only (no script, style, noscript, template); a block per paragraph."""
    blocks = html_to_blocks(clean_text(decode_text(data)))
    return ParsedDocument(file_type=FileType.HTML, pages=[ParsedPage(blocks=blocks)])
