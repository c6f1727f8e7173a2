"""Upload names made safe to store and show: no paths, no control characters, bounded length
(in characters, and in UTF-8 bytes, which is what file systems and the column limit count)."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["FALLBACK_FILE_NAME", "safe_file_name"]

FALLBACK_FILE_NAME = "document"

# Characters Windows refuses in names, plus the path separator we already split on.
_RESERVED_CHARS = re.compile(r'[<>:"/\\|?*]')
_WHITESPACE_RUN = re.compile(r"\s+")
# Device names that Windows resolves whatever the extension (`CON.txt` is the console).
_RESERVED_STEMS = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{digit}" for digit in range(10)}
    | {f"lpt{digit}" for digit in range(10)}
)
# An extension longer than this is more likely part of the name than a real file kind.
_MAX_EXTENSION_CHARS = 16


def _drop_invisible(name: str) -> str:
    # Cc: control characters (NUL included); Cf: format characters such as the right-to-left
    # override that disguises `gpj.exe` as `exe.jpg`; Cs: lone surrogates, which no UTF-8 holds.
    return "".join(char for char in name if unicodedata.category(char) not in ("Cc", "Cf", "Cs"))


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def _cut(text: str, max_chars: int, max_bytes: int) -> str:
    # Cut at a code point boundary: a sequence split by the byte limit is dropped whole (the
    # text is valid UTF-8, so only the last, partial character can fail to decode).
    return text[:max_chars].encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")


def _split_extension(name: str) -> tuple[str, str]:
    stem, dot, extension = name.rpartition(".")
    if not dot or not stem or len(extension) + 1 > _MAX_EXTENSION_CHARS or " " in extension:
        return name, ""
    return stem, "." + extension


def _shorten(name: str, max_chars: int, max_bytes: int) -> str:
    if len(name) <= max_chars and _utf8_len(name) <= max_bytes:
        return name
    stem, extension = _split_extension(name)
    if len(extension) >= max_chars or _utf8_len(extension) >= max_bytes:
        return _cut(name, max_chars, max_bytes)
    room_chars = max_chars - len(extension)
    room_bytes = max_bytes - _utf8_len(extension)
    return _cut(stem, room_chars, room_bytes).rstrip(" .") + extension


def safe_file_name(
    name: str, max_chars: int, max_bytes: int, fallback: str = FALLBACK_FILE_NAME
) -> str:
    """A file name safe to store and display, derived from what the client sent.

    Keeps only the last path component (forward or back slashes), drops control and invisible
    format characters, replaces characters Windows forbids, trims dots and spaces at both ends
    (no `..`, no hidden files), prefixes Windows device names, and shortens to `max_chars`
    characters and `max_bytes` UTF-8 bytes, cutting between characters and keeping the
    extension. An empty result becomes `fallback`.
    """
    name = unicodedata.normalize("NFC", name).replace("\\", "/")
    name = _drop_invisible(name.rsplit("/", 1)[-1])
    name = _RESERVED_CHARS.sub("_", name)
    name = _WHITESPACE_RUN.sub(" ", name).strip(" .")
    if not name:
        return _cut(fallback, max_chars, max_bytes)
    if name.split(".", 1)[0].strip().lower() in _RESERVED_STEMS:
        name = "_" + name
    name = _shorten(name, max_chars, max_bytes).strip(" .")
    return name or _cut(fallback, max_chars, max_bytes)
