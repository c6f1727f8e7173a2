"""Plain text, Markdown and HTML to text blocks. These formats have no pages: `number` is None."""

from __future__ import annotations

from lxml import etree

from graphrag.errors import DecodeBudgetError
from graphrag.ingest.models import FileType, ParsedDocument, ParsedPage
from graphrag.ingest.parsers.text_decoding import clean_text, decode_text
from graphrag.settings import IngestSettings
from graphrag.text_scan import collapse_spaces, line_groups

__all__ = ["html_to_blocks", "parse_html", "parse_plain_text"]

# Elements whose content is code or hidden markup, never reader-visible text.
_DROPPED_TAGS = frozenset({"script", "style", "noscript", "template"})
# Elements that start a new block of text when a browser lays the page out.
_BLOCK_TAGS = frozenset(
    {
        *("address", "article", "aside", "blockquote", "caption", "dd", "details", "dialog"),
        *("div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header"),
        *("h1", "h2", "h3", "h4", "h5", "h6", "hr", "li", "main", "nav", "ol", "p", "pre"),
        *("section", "summary", "table", "td", "th", "title", "tr", "ul"),
    }
)
_PRE = "pre"
_LINE_BREAK_TAG = "br"
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


class _TextTarget:
    """Receives libxml2's parse events and keeps the visible text, with block and line breaks.

    No tree is built: the events come balanced (libxml2 closes what the markup left open), so
    a stack of the open element names says what each piece of text is inside. Comments,
    doctypes, CDATA and processing instructions have no handler here and so are dropped.
    """

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self.parts: list[str] = []
        self.text: list[str] = []  # the pieces of the current run of text, not yet spaced
        self.open: list[str] = []
        self.dropped = 0  # open elements whose content is never shown
        self.preformatted = 0  # open <pre> elements: their spacing is kept

    def start(self, tag: str, attrib: object) -> None:
        """An element opens: a block break, a line break, or hidden content from here."""
        if len(self.open) >= self.max_depth:
            # libxml2 looks through the open elements for each stray end tag: a cap on their
            # number bounds the work per byte (a real page nests far less deep).
            raise DecodeBudgetError(
                f"the HTML page nests elements deeper than {self.max_depth} (ingest.html_max_depth)"
            )
        self._flush()
        self.open.append(tag)
        if tag in _DROPPED_TAGS:
            self.dropped += 1
        elif tag == _PRE:
            self.preformatted += 1
        if self.dropped:
            return
        if tag == _LINE_BREAK_TAG:
            self.parts.append(_LINE_BREAK)
        elif tag in _BLOCK_TAGS:
            self.parts.append(_BLOCK_BREAK)

    def end(self, tag: str) -> None:
        """The innermost open element closes."""
        self._flush()
        name = self.open.pop()
        if name in _DROPPED_TAGS:
            self.dropped -= 1
        elif name == _PRE:
            self.preformatted -= 1
        if not self.dropped and name in _BLOCK_TAGS:
            self.parts.append(_BLOCK_BREAK)

    def data(self, text: str) -> None:
        """A piece of text (libxml2 hands a run over in pieces, e.g. around each entity)."""
        if not self.dropped:
            self.text.append(text)

    def _flush(self) -> None:
        """The run of text so far: as it is inside <pre>, its whitespace runs made one space
        elsewhere (a run split by an entity or a comment is still one run)."""
        if self.text:
            run = "".join(self.text)
            self.parts.append(run if self.preformatted else collapse_spaces(run))
            self.text.clear()

    def close(self) -> str:
        """All the text, once the parse has ended."""
        self._flush()
        return "".join(self.parts)


def html_to_blocks(markup: str, max_depth: int) -> list[str]:
    """Visible text of an HTML document as blocks, in document order.

    libxml2's HTML parser reads the markup in C; raises DecodeBudgetError when elements nest
    deeper than `max_depth`.
    """
    # huge_tree lifts libxml2's own cap on one comment or attribute (about 10 MB), past which
    # the rest of it would be read as page text; the page size is a budget of ours instead.
    parser = etree.HTMLParser(target=_TextTarget(max_depth), huge_tree=True)
    parser.feed(markup)
    text: str = parser.close()
    # A blank line (only whitespace) ends a block; lines are stripped, empty ones dropped.
    return line_groups(text)


def parse_html(data: bytes, settings: IngestSettings) -> ParsedDocument:
    """HTML: visible text only (no script, style, noscript, template); a block per paragraph.

    Raises DecodeBudgetError for a page over `settings.html_max_bytes` or nesting deeper than
    `settings.html_max_depth`.
    """
    if len(data) > settings.html_max_bytes:
        raise DecodeBudgetError(
            f"the HTML page is {len(data)} bytes, over the budget of "
            f"{settings.html_max_bytes} bytes (ingest.html_max_bytes)"
        )
    blocks = html_to_blocks(clean_text(decode_text(data)), settings.html_max_depth)
    return ParsedDocument(file_type=FileType.HTML, pages=[ParsedPage(blocks=blocks)])
