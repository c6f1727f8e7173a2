"""A ZIP archive's central directory, read record by record without `zipfile`.

`zipfile` builds an object for every record of the directory, however many the archive holds
(a 50 MB upload can hold a million tiny entries), and reads records until the directory's byte
size is used up, whatever count the end record declares. Here the end record is read from the
archive's last bytes, and the records are walked one at a time, so a caller can stop early.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["CentralDirectory", "entry_names", "find_directory"]

# Layouts from the ZIP format (APPNOTE 4.3.12, 4.3.14-16), the same `zipfile` reads.
_END = struct.Struct("<4s4H2LH")
_END_SIGNATURE = b"PK\x05\x06"
_MAX_COMMENT = (1 << 16) - 1
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_LOCATOR_SIGNATURE = b"PK\x06\x07"
_ZIP64_END = struct.Struct("<4sQ2H2L4Q")
_ZIP64_END_SIGNATURE = b"PK\x06\x06"
_RECORD_SIGNATURE = b"PK\x01\x02"
_RECORD_SIZE = 46  # the fixed part of a directory record
_RECORD_LENGTHS = struct.Struct("<3H")  # name, extra field and comment lengths
_RECORD_LENGTHS_AT = 28


@dataclass(frozen=True)
class CentralDirectory:
    declared_entries: int  # the count the end record gives
    start: int  # the first record's position in the data
    end: int  # the position just past the last record


def _end_record_position(data: bytes) -> int:
    """Where the end record starts (-1: none), looked for as `zipfile` does: at the very end,
    else within the last comment's reach."""
    last = len(data) - _END.size
    if last >= 0 and data.startswith(_END_SIGNATURE, last) and data.endswith(b"\x00\x00"):
        return last
    return data.rfind(_END_SIGNATURE, max(0, last - _MAX_COMMENT))


def find_directory(data: bytes) -> CentralDirectory | None:
    """The directory's place and declared size, from the end record (and the ZIP64 one when the
    archive has it); None when the data has no end record or it points outside the data."""
    at = _end_record_position(data)
    if at < 0 or at + _END.size > len(data):
        return None
    fields = _END.unpack_from(data, at)
    entries, size = fields[4], fields[5]
    locator = at - _ZIP64_LOCATOR.size
    if locator >= 0 and data.startswith(_ZIP64_LOCATOR_SIGNATURE, locator):
        at = locator - _ZIP64_END.size
        if at < 0 or not data.startswith(_ZIP64_END_SIGNATURE, at):
            return None
        zip64 = _ZIP64_END.unpack_from(data, at)
        entries, size = zip64[7], zip64[8]
    # The directory ends where the end records begin; any bytes before the archive (a
    # self-extracting stub) shift it, so its position is counted back from there.
    start = at - size
    if start < 0:
        return None
    return CentralDirectory(declared_entries=entries, start=start, end=at)


def entry_names(data: bytes, directory: CentralDirectory) -> Iterator[bytes]:
    """The raw names of the directory's records in order, until a record does not parse."""
    pos = directory.start
    while pos + _RECORD_SIZE <= directory.end and data.startswith(_RECORD_SIGNATURE, pos):
        name_len, extra_len, comment_len = _RECORD_LENGTHS.unpack_from(
            data, pos + _RECORD_LENGTHS_AT
        )
        name_at = pos + _RECORD_SIZE
        yield data[name_at : name_at + name_len]
        pos = name_at + name_len + extra_len + comment_len
