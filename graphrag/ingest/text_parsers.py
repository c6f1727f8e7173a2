"""Plain text, Markdown and HTML to text blocks. These formats have no pages: `number` is None."""

from __future__ import annotations

import re
import warnings

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning
from bs4.element import NavigableString, PreformattedString, Tag

from graphrag.ingest.models import FileType, ParsedDocument, ParsedPage
from graphrag.ingest.text_decoding import clean_text, decode_text

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
_SPACES = re.compile(r"\s+")
_BLANK_LINES = re.compile(r"\n\s*\n")


def _page(text: str) -> ParsedPage:
    text = text.strip()
    return ParsedPage(blocks=[text] if text else [])


def parse_plain_text(data: bytes, file_type: FileType) -> ParsedDocument:
    """TXT or Markdown: decoded (UTF-8, else a tolerant fallback) and kept whole as one block.

    Markdown syntax is kept: headings and lists carry meaning for retrieval and extraction.
    """
    return ParsedDocument(file_type=file_type, pages=[_page(clean_text(decode_text(data)))])


def _collapse_strings(soup: BeautifulSoup) -> None:
    """HTML whitespace is layout, not text: collapse it everywhere except inside <pre>."""
    for string in list(soup.find_all(string=True)):
        if not isinstance(string, NavigableString):
            continue
        if isinstance(string, PreformattedString):  # comments, doctype, CDATA, PIs
            string.extract()
        elif string.find_parent("pre") is None:
            string.replace_with(_SPACES.sub(" ", str(string)))


def _mark_blocks(soup: BeautifulSoup) -> None:
    for element in list(soup.find_all(True)):
        if not isinstance(element, Tag):
            continue
        if element.name == "br":
            element.replace_with(_LINE_BREAK)
        elif element.name in _BLOCK_TAGS:
            element.insert_before(_BLOCK_BREAK)
            element.insert_after(_BLOCK_BREAK)


def html_to_blocks(markup: str) -> list[str]:
    """Visible text of an HTML document as blocks, in document order."""
    with warnings.catch_warnings():
        # Short inputs that look like a URL or XHTML with an XML prolog are still HTML to us.
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(markup, "html.parser")
    for element in soup.find_all(_DROPPED_TAGS):
        element.decompose()
    _collapse_strings(soup)
    _mark_blocks(soup)
    blocks = []
    for chunk in _BLANK_LINES.split(soup.get_text()):
        lines = [line.strip() for line in chunk.split("\n")]
        block = "\n".join(line for line in lines if line)
        if block:
            blocks.append(block)
    return blocks


def parse_html(data: bytes) -> ParsedDocument:
    """HTML: visible text only (no script, style, noscript, template); a block per paragraph."""
    blocks = html_to_blocks(clean_text(decode_text(data)))
    return ParsedDocument(file_type=FileType.HTML, pages=[ParsedPage(blocks=blocks)])
