"""Where uploaded originals live: one folder per knowledge base, one per document."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

__all__ = ["FileStorage"]


class FileStorage:
    """A directory tree under the configured storage root. Paths never come from user input."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def kb_dir(self, kb_id: uuid.UUID) -> Path:
        return self.root / str(kb_id)

    def document_path(self, kb_id: uuid.UUID, knowledge_id: uuid.UUID) -> Path:
        # The stored name is the id: the user's file name is kept in the database only.
        return self.kb_dir(kb_id) / f"{knowledge_id}.bin"

    def save(self, kb_id: uuid.UUID, knowledge_id: uuid.UUID, data: bytes) -> Path:
        """Write atomically (temp file + rename), so a reader never sees half a file."""
        path = self.document_path(kb_id, knowledge_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".part")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        return path

    def read(self, path: str) -> bytes:
        return Path(path).read_bytes()

    def delete_document(self, kb_id: uuid.UUID, knowledge_id: uuid.UUID) -> None:
        self.document_path(kb_id, knowledge_id).unlink(missing_ok=True)

    def delete_kb(self, kb_id: uuid.UUID) -> None:
        shutil.rmtree(self.kb_dir(kb_id), ignore_errors=True)
