"""Bytes to clean text: UTF-8 first, a tolerant fallback, and the binary-content test."""

from __future__ import annotations

import codecs

__all__ = ["clean_text", "decode_text", "looks_like_text"]

# C0 control bytes that never appear in plain text (tab, newlines, form feed, escape and the DOS
# end-of-file marker are left out: real text files carry them).
_CONTROL_BYTES = bytes(b for b in range(0x20) if b not in b"\t\n\v\f\r\x1a\x1b") + b"\x7f"
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# PostgreSQL text cannot hold NUL; the rest are C0 controls that only add noise to chunks.
_STRIP_CHARS = {code: None for code in range(0x20) if chr(code) not in "\t\n\f"}


def _decode_strict(data: bytes) -> str | None:
    if data.startswith(_UTF16_BOMS):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def looks_like_text(data: bytes, max_control_ratio: float) -> bool:
    """True for UTF-8 (or BOM-marked UTF-16) text, or 8-bit text without binary control bytes.

    Legacy 8-bit encodings (Windows-1252, Latin-1) are accepted because users still have such
    files; NUL bytes or more than `max_control_ratio` control bytes mean binary content.
    """
    if not data:
        return False
    if data.startswith(_UTF16_BOMS):
        return _decode_strict(data) is not None
    if b"\x00" in data:
        return False
    controls = len(data) - len(data.translate(None, _CONTROL_BYTES))
    return controls <= max_control_ratio * len(data)


def decode_text(data: bytes) -> str:
    """Decode UTF-8 (BOM allowed) or BOM-marked UTF-16; otherwise Windows-1252, never failing."""
    strict = _decode_strict(data)
    if strict is not None:
        return strict
    # Windows-1252 is a superset of Latin-1 for printable text; bytes it leaves undefined are
    # replaced rather than refused, so a stray byte never fails a whole document.
    return data.decode("cp1252", errors="replace")


def clean_text(text: str) -> str:
    """Normalise newlines to `\\n` and drop NUL and other control characters."""
    return text.replace("\r\n", "\n").replace("\r", "\n").translate(_STRIP_CHARS)
