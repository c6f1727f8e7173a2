"""Checks of text coming from a request before it reaches PostgreSQL or Neo4j.

Both stores refuse some strings outright (NUL for PostgreSQL, lone surrogates for any UTF-8
driver): such input is the caller's mistake, answered 422, never a server error.
"""

from __future__ import annotations

from graphrag.errors import InvalidInputError

__all__ = ["check_storable", "has_control_chars"]


def has_control_chars(text: str) -> bool:
    """Whether `text` holds an ASCII control character (tab and newline included)."""
    return any(ord(c) < 32 or ord(c) == 127 for c in text)


def check_storable(text: str, what: str) -> str:
    """`text` unchanged if both stores can keep it; else InvalidInputError naming `what`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{what} is not valid Unicode text") from exc
    if "\x00" in text:
        raise InvalidInputError(f"{what} must not contain NUL characters")
    return text
