"""A URL's body read within the size cap, whatever content coding the site chose.

The request asks for none (`Accept-Encoding: identity`), yet a site may still send one, and
httpx would inflate it before the cap could count a byte (492 bytes of `gzip, gzip` grow to
210 MB in one read). So the raw bytes are read as they come and counted, at most one coding
layer is undone, and every inflated byte counts against the cap as it is produced. Stacked and
unknown codings are refused.
"""

from __future__ import annotations

import zlib

import httpx

from graphrag.errors import FileTooLargeError, UrlEncodingRefusedError, UrlFetchError

__all__ = ["read_body"]

_MB = 1024 * 1024
# zlib's window bits: gzip framing, and the zlib framing HTTP's "deflate" names (RFC 9110 8.4.1.2).
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
_NO_CODING = frozenset({"", "identity"})


def _too_large(cap: int) -> FileTooLargeError:
    return FileTooLargeError(f"the document exceeds the {cap // _MB} MB limit", limit=cap)


class _CappedBuffer:
    """Bytes gathered up to `cap`; one more is a FileTooLargeError."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.size = 0
        self._parts: list[bytes] = []

    def room(self) -> int:
        return self.cap - self.size

    def add(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.cap:
            raise _too_large(self.cap)
        self._parts.append(data)

    def data(self) -> bytes:
        return b"".join(self._parts)


class _Inflater:
    """Undoes one gzip or deflate layer into a capped buffer, never asking zlib for more than
    one byte past the room left, so a bomb is cut at the cap, not after it has grown."""

    def __init__(self, coding: str, out: _CappedBuffer) -> None:
        self.coding = coding
        self._wbits = _WBITS[coding]
        self._engine = zlib.decompressobj(self._wbits)
        self._out = out
        self._started = False
        self._ended = False

    def feed(self, data: bytes) -> None:
        self._started = self._started or bool(data)
        try:
            self._feed(data)
        except zlib.error as exc:
            raise UrlFetchError(f"the body's {self.coding} data is corrupt: {exc}") from exc

    def _feed(self, data: bytes) -> None:
        # A turn consumes all of `data`, ends a stream, or stops at max_length, which overflows
        # the buffer (it raises): the loop runs once per gzip member begun in `data`, plus one.
        while data and not self._ended:
            if self._engine.eof:
                self._engine = zlib.decompressobj(self._wbits)  # the next gzip member
            self._out.add(self._engine.decompress(data, self._out.room() + 1))
            if self._engine.eof:
                data = self._engine.unused_data
                # deflate is one zlib stream: whatever follows it is not content
                self._ended = self.coding == "deflate"
            else:
                data = self._engine.unconsumed_tail

    def finish(self) -> None:
        if self._started and not self._engine.eof:
            raise UrlFetchError(f"the body's {self.coding} data is cut short")


def _coding(response: httpx.Response) -> str | None:
    """The one content coding to undo (None: none); stacked or unknown codings are refused."""
    codings = [
        name.strip().lower()
        for name in response.headers.get_list("content-encoding", split_commas=True)
    ]
    codings = [name for name in codings if name not in _NO_CODING]
    if len(codings) > 1:
        raise UrlEncodingRefusedError(
            "the URL's body is encoded more than once; one gzip or deflate layer at most",
            content_encoding=", ".join(codings),
        )
    if codings and codings[0] not in _WBITS:
        raise UrlEncodingRefusedError(
            f"the URL's body uses the unsupported content coding '{codings[0]}'",
            content_encoding=codings[0],
        )
    return codings[0] if codings else None


def read_body(response: httpx.Response, cap: int) -> bytes:
    """The decoded body, refused as soon as it is known (declared, received or inflated) to
    exceed `cap` bytes; the raw bytes on the wire count against the cap too."""
    coding = _coding(response)
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise _too_large(cap)
    out = _CappedBuffer(cap)
    inflater = _Inflater(coding, out) if coding else None
    received = 0
    for block in response.iter_raw():
        received += len(block)
        if received > cap:
            raise _too_large(cap)
        if inflater is None:
            out.add(block)
        else:
            inflater.feed(block)
    if inflater is not None:
        inflater.finish()
    return out.data()
