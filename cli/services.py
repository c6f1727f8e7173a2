"""The services of one command (`ask`, `mcp`, `ingest`, `status`), opened and closed around it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from graphrag.services import Role, Services, open_services
from graphrag.settings import Settings

__all__ = ["command_services"]


@contextmanager
def command_services(settings: Settings) -> Iterator[Services]:
    """The process's services (each part opened on first use), closed when the command ends;
    tasks go out through the send-only client."""
    from workers.queue import sender_queue

    services = open_services(settings, Role.COMMAND, sender_queue(settings))
    try:
        yield services
    finally:
        services.close()
