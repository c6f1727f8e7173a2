"""Reading an upload without trusting its size."""

from __future__ import annotations

from fastapi import UploadFile

from graphrag.errors import EmptyFileError, FileTooLargeError

__all__ = ["read_capped"]

_READ_BLOCK = 1 << 20


def read_capped(upload: UploadFile, cap_bytes: int) -> bytes:
    """The upload's bytes; 413 past `cap_bytes`, 422 when empty."""
    parts: list[bytes] = []
    size = 0
    while block := upload.file.read(_READ_BLOCK):
        size += len(block)
        if size > cap_bytes:
            raise FileTooLargeError(
                f"the file exceeds the {cap_bytes // (1024 * 1024)} MB limit", limit_bytes=cap_bytes
            )
        parts.append(block)
    if size == 0:
        raise EmptyFileError("the file is empty", name=upload.filename)
    return b"".join(parts)
