"""What the faces need from the process that serves them (the API, or `graphrag mcp`)."""

from __future__ import annotations

from dataclasses import dataclass

from graphrag.chat.turn import ChatServices
from graphrag.ingest.storage import FileStorage
from graphrag.outbox.relay_loop import RelayLoop
from graphrag.settings import Settings

__all__ = ["FaceServices"]


@dataclass(frozen=True)
class FaceServices:
    """The chat's services (without the agent memory: the faces keep no conversation), plus
    file storage and the outbox relay for documents added through a face."""

    chat: ChatServices
    storage: FileStorage
    relay: RelayLoop  # kicked after a commit that wrote outbox rows

    @property
    def settings(self) -> Settings:
        return self.chat.settings
