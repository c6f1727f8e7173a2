"""The DOCX entry budget is checked from the archive's end record and a walk of at most one
record past it, before `zipfile` reads the directory: in the API's sniff and in the worker."""

from __future__ import annotations

import io
import struct
import zipfile
from typing import NoReturn

import pytest

from graphrag.errors import DecodeBudgetError
from graphrag.ingest.models import FileType
from graphrag.ingest.parsers.decode_budgets import check_docx_archive
from graphrag.ingest.parsers.file_types import detect_file_type
from graphrag.ingest.parsers.zip_directory import entry_names, find_directory
from graphrag.settings import get_settings
from tests.support import sample_files

pytestmark = pytest.mark.unit

INGEST = get_settings().ingest
RATIO = INGEST.max_control_char_ratio
CAP = 20
# The end record's two entry counts (this disk, all disks), 8 bytes into it.
_COUNTS_AT = 8


def _sniff(data: bytes, cap: int | None = CAP) -> FileType:
    return detect_file_type(
        data, file_name="memo.docx", max_control_ratio=RATIO, docx_max_entries=cap
    )


def _lying(data: bytes, declared: int) -> bytes:
    """`data` whose end record declares `declared` entries, whatever its directory holds."""
    at = data.rfind(b"PK\x05\x06")
    counts = struct.pack("<2H", declared, declared)
    return data[: at + _COUNTS_AT] + counts + data[at + _COUNTS_AT + len(counts) :]


@pytest.fixture(scope="module")
def crowded() -> tuple[bytes, int]:
    """A DOCX of 5,000 more files than its own parts, and its file count as zipfile reads it
    (made before zipfile is forbidden: module-scoped fixtures are set up first)."""
    data = sample_files.docx_with_extra_entries(5_000)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return data, len(archive.infolist())


@pytest.fixture
def no_zipfile(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening the archive with zipfile fails the test: the refusal must come before it."""

    def refuse(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("zipfile read the archive")

    monkeypatch.setattr(zipfile, "ZipFile", refuse)


def test_a_docx_within_the_budget_is_a_docx() -> None:
    data = sample_files.docx_with_extra_entries(3)
    assert _sniff(data) is FileType.DOCX
    names = list(entry_names(data, find_directory(data) or pytest.fail("no directory")))
    assert b"word/document.xml" in names and names[-1] == b"pad/2"


@pytest.mark.usefixtures("no_zipfile")
def test_the_sniff_refuses_a_docx_of_too_many_files_from_its_end_record(
    crowded: tuple[bytes, int],
) -> None:
    data, files = crowded
    with pytest.raises(DecodeBudgetError) as caught:
        _sniff(data)
    error = caught.value
    assert (error.http_status, error.code) == (422, "decode_budget_exceeded")
    assert "ingest.docx_max_entries" in error.message and f"at most {CAP}" in error.message
    assert f"holds {files} files" in error.message  # the count the end record declares


@pytest.mark.usefixtures("no_zipfile")
def test_a_lying_entry_count_is_caught_by_the_bounded_walk(crowded: tuple[bytes, int]) -> None:
    data = _lying(crowded[0], declared=1)
    assert find_directory(data) is not None
    with pytest.raises(DecodeBudgetError, match=rf"more than {CAP} files"):
        _sniff(data)
    with pytest.raises(DecodeBudgetError, match=rf"more than {CAP} files"):
        check_docx_archive(data, INGEST.model_copy(update={"docx_max_entries": CAP}))


def test_without_a_cap_the_sniff_still_tells_docx_from_zip() -> None:
    assert _sniff(sample_files.docx_with_extra_entries(50), cap=None) is FileType.DOCX
    assert _sniff(sample_files.docx_file(["plain"]), cap=None) is FileType.DOCX


def test_a_zip64_directory_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # zipfile writes the ZIP64 end records past this many entries: lowered, a small archive has them
    monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 4)
    data = sample_files.docx_with_extra_entries(30)
    assert b"PK\x06\x06" in data[-200:]
    directory = find_directory(data)
    assert directory is not None and directory.declared_entries == len(
        list(entry_names(data, directory))
    )
    assert _sniff(data, cap=directory.declared_entries) is FileType.DOCX
    with pytest.raises(DecodeBudgetError, match="holds"):
        _sniff(data, cap=directory.declared_entries - 1)


def test_not_a_zip_directory() -> None:
    data = sample_files.docx_file(["cut"])
    assert find_directory(data[: len(data) // 2]) is None
    assert find_directory(b"PK\x05\x06") is None
